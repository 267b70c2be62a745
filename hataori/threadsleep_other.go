//go:build !linux

package hataori

import "time"

// threadSleep sleeps for d (with the runtime timer's precision).
func threadSleep(d time.Duration) { time.Sleep(d) }

// fineTimerSlack does nothing off Linux.
func fineTimerSlack() (restore func()) { return func() {} }
