package coll

import (
	"runtime"
	"time"
)

// A coordinator never blocks in the Go scheduler's view: its waits are raw
// system calls (ThreadSleep, Kick.Wait), so that they keep its P. The
// runtime's system monitor (sysmon) therefore sees it run without a break,
// and once that has lasted 10 ms it preempts it and, if it finds it inside
// an MPI call (a cgo call, which the runtime counts as a system call),
// takes its P away. Each P it takes sets sysmon polling every 20 µs again
// for a millisecond or more; a coordinator that waits in MPI calls gives
// it one every 10 ms, so sysmon never slows down. With more computing
// threads than cores every one of its wake-ups preempts a thread that
// computes items: with 4 ranks of 2 threads on 2 cores the four sysmons
// took 9% of the CPU, and the preemptions slowed the items further.
//
// Resched passes its goroutine through the scheduler (runtime.Gosched)
// every ReschedEvery, before sysmon would preempt it: sysmon then sees a
// goroutine that was scheduled recently and leaves it alone. On a goroutine
// locked to its thread that costs two thread hand-offs (its P goes to
// another thread and comes back), a few tens of microseconds every 5 ms.
// The other half of the remedy, on a node with more ranks than CPUs, is a
// P left idle while a call's slots compute (hataori's
// keepCoordinatorResponsive): sysmon does not take a P from a system call
// while another P is idle.

// ReschedEvery is how often Resched passes through the scheduler: well
// under the runtime's 10 ms preemption bound, so that a coordinator
// descheduled by the kernel for a few milliseconds still gets there first.
var ReschedEvery = 5 * time.Millisecond

// gosched is runtime.Gosched; a variable for the tests.
var gosched = runtime.Gosched

// Resched paces a long-running loop's trips through the scheduler. The
// zero value is ready; its first Check starts the clock.
type Resched struct{ last time.Time }

// Check calls runtime.Gosched when ReschedEvery has passed since the last
// time it did (or since the first Check). Cost otherwise: one reading of
// the clock.
func (r *Resched) Check() {
	now := time.Now()
	if r.last.IsZero() {
		r.last = now
		return
	}
	if now.Sub(r.last) < ReschedEvery {
		return
	}
	gosched()
	r.last = time.Now()
}
