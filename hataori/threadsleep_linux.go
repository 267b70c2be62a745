//go:build linux

package hataori

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadSleep blocks the calling OS thread for d with nanosleep, which
// keeps microsecond precision (the Go runtime hands the thread's P to
// another thread meanwhile). An interrupted sleep just ends early.
func threadSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}
