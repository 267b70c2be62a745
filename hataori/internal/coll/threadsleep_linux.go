//go:build linux

package coll

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ThreadSleep blocks the calling OS thread for d with nanosleep, which
// keeps microsecond precision. It is a raw system call: the runtime is not
// told, so it neither hands the thread's P to another thread nor wakes
// sysmon to take it back (a wake-up per sleep, about 5% of a core here);
// the coordinator keeps its P, which Pmap reserved for it by raising
// GOMAXPROCS, and a stop-the-world waits at most one sleep (<= 50 µs). An
// interrupted sleep just ends early.
func ThreadSleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}

// FineTimerSlack sets the calling thread's timer slack to 1 µs and returns
// a function that restores the previous value. Linux stretches a thread's
// sleeps by its slack (50 µs by default), which would make a coordinator's
// 20 µs back-off sleep last about 70 µs.
func FineTimerSlack() (restore func()) {
	old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || old <= 1000 {
		return func() {}
	}
	if unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0) != nil {
		return func() {}
	}
	return func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) }
}
