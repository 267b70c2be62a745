//go:build !linux

package coll

import "time"

// ThreadSleep sleeps for d (with the runtime timer's precision).
func ThreadSleep(d time.Duration) { time.Sleep(d) }

// FineTimerSlack does nothing off Linux.
func FineTimerSlack() (restore func()) { return func() {} }
