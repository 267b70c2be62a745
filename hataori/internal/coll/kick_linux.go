//go:build linux

package coll

import (
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kick is an event count that one goroutine waits on with a timeout and
// others signal, through raw futex system calls: the runtime is not told,
// so the waiter keeps its thread and P and a wake-up costs one futex wake
// and one context switch (2–4 µs here), not the scheduler's hand-off of a
// P between threads (10–25 µs here, with spinning threads on a shared
// core). Like ThreadSleep, a wait is bounded (by the caller's timeout), so
// a stop-the-world waits at most that long.
//
// A waiter reads the count with seq, checks its condition, and calls wait
// with that count; signal makes the condition true first, then calls
// signal: a signal between the check and the wait makes the wait return at
// once (the count changed), so none is lost.
// Operation codes of futex(2) (linux/futex.h), which x/sys/unix does not
// name: FUTEX_WAIT and FUTEX_WAKE, with FUTEX_PRIVATE_FLAG for a Kick (one
// process) and without it for a Bell (memory shared between processes).
const (
	futexWait        = 0
	futexWake        = 1
	futexWaitPrivate = futexWait | 128
	futexWakePrivate = futexWake | 128
)

type Kick struct {
	n       atomic.Uint32
	waiters atomic.Int32
}

func (k *Kick) Seq() uint32 { return k.n.Load() }

// Wait blocks the calling thread until the count differs from seen, for at
// most d; it may return earlier (a signal to the thread, such as the
// runtime's preemption, ends it), so callers check their condition again.
// It reports whether a signal call woke it.
func (k *Kick) Wait(seen uint32, d time.Duration) bool {
	return k.waitOp(futexWaitPrivate, seen, d)
}

func (k *Kick) waitOp(op uintptr, seen uint32, d time.Duration) bool {
	if k.n.Load() != seen {
		return false
	}
	ts := unix.NsecToTimespec(int64(d))
	k.waiters.Add(1)
	_, _, errno := unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&k.n)), op, uintptr(seen), uintptr(unsafe.Pointer(&ts)), 0, 0)
	k.waiters.Add(-1)
	return errno == 0
}

// Signal advances the count and wakes the waiters.
func (k *Kick) Signal() { k.wake(futexWakePrivate, 1<<30) }

// SignalOne advances the count and wakes one waiter: for one new item that
// any of several waiters may take (the others would only go back to
// sleep). A waiter that is not yet in its system call sees the count
// change and does not sleep.
func (k *Kick) SignalOne() { k.wake(futexWakePrivate, 1) }

func (k *Kick) wake(op uintptr, n int) {
	k.n.Add(1)
	if k.waiters.Load() > 0 {
		_, _, _ = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&k.n)), op, uintptr(n), 0, 0, 0)
	}
}
