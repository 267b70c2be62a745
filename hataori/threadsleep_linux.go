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

// fineTimerSlack sets the calling thread's timer slack to 1 µs and returns
// a function that restores the previous value. Linux stretches a thread's
// sleeps by its slack (50 µs by default), which would make a coordinator's
// 20 µs back-off sleep last about 70 µs.
func fineTimerSlack() (restore func()) {
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || old <= 1000 {
		return func() {}
	}
	if unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0) != nil {
		return func() {}
	}
	return func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) }
}
