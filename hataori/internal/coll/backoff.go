package coll

import (
	"cmp"
	"time"
)

// Back-off of an idle coordinator: for SpinFor after its last progress it
// spins, polling; then it sleeps, starting at BackoffMin and doubling up to
// BackoffMax (the poll interval: the longest a message waits for an idle
// coordinator), so that oversubscribed ranks leave the CPU to their peers
// (MPICH does not yield inside MPI_Iprobe or a blocking receive). The spin
// does not call runtime.Gosched: on a goroutine locked to its thread (the
// coordinator always is) that hands the thread's P away and back, two
// thread wake-ups, 10–50 µs here. The sleep blocks the coordinator's
// locked OS thread in nanosleep (ThreadSleep), with a 1 µs timer slack for
// the call (FineTimerSlack): a Go timer this short is rounded up to about
// a millisecond by the runtime's netpoller, which would add that much
// latency to every message that arrives while the coordinator sleeps. A
// remote coordinator sleeps in a futex wait on a kick instead, which its
// slots signal when they queue a RESULT (WaitKick). Variables only so that
// benchmarks can vary them.
var (
	SpinFor    = 20 * time.Microsecond
	BackoffMin = 10 * time.Microsecond
	BackoffMax = 50 * time.Microsecond
	// BackoffMaxShared is the Pmap loops' BackoffMax on a node whose
	// launcher started more ranks than it has CPUs: there a woken
	// coordinator waits for a core anyway, often for longer, and every
	// poll that finds nothing costs a context switch on a core that a slot
	// needs (4 ranks on 2 cores under MPICH: the root's coordinator woke
	// about 10,000 times a second and took 13–20% of a core).
	BackoffMaxShared = 200 * time.Microsecond
	// BackoffMaxBacked is the root loop's BackoffMax on such a node while
	// its own slots compute and every logical slot of every other rank,
	// the prefetch slots included, holds a batch: a READY that comes in
	// then is from a rank that has its next batch already, so it can wait
	// (4 ranks on 2 cores: 0.02–0.03 of ideal over BackoffMaxShared, under
	// Open MPI and MPICH).
	BackoffMaxBacked = time.Millisecond
	// SlotIdleWait bounds one wait of an idle remote slot for its next
	// TASK (a futex wait on a kick: it ends at the TASK, or at a signal to
	// the thread such as the runtime's preemption, so a stop-the-world
	// does not wait for it).
	SlotIdleWait = 200 * time.Microsecond
	// SlotIdleWaitShared is SlotIdleWait on a node whose launcher started
	// more ranks than it has CPUs. The bound only paces the loop (every
	// TASK and the queue's close signal the kick); each timed-out wait is
	// a context switch on a core the slots share: lanes with 2 engines on
	// each of 4 ranks over 2 cores, interleaved launches, 0.854–0.882 of
	// ideal against 0.819–0.854 with SlotIdleWait. Below ReschedEvery, as
	// BusyWaitShared.
	SlotIdleWaitShared = 4 * time.Millisecond
	// BusyWait bounds a remote coordinator's wait while every logical
	// slot of its rank holds a batch (ended early by the first to finish):
	// the longest a CANCEL from the root, or the end of ctx, waits then.
	BusyWait = time.Millisecond
	// BusyWaitShared is BusyWait on a node whose launcher started more
	// ranks than it has CPUs, where each timed-out wait is a context
	// switch on a core that slots share (4 unbound ranks on 2 cores under
	// MPICH, interleaved launches: medians 0.856 / 0.853 of ideal,
	// MPI-only / hybrid, with 4–20 ms, against 0.837 / 0.845 with 1 ms).
	// Below ReschedEvery, so that a loop that waits this long still
	// passes through the scheduler before sysmon would preempt it.
	BusyWaitShared = 4 * time.Millisecond
)

// Backoff paces a polling loop. Its waits also pass the goroutine through
// the scheduler every ReschedEvery (Resched); a loop that may go on
// making progress for longer calls Resched.Check itself, once a round.
type Backoff struct {
	since time.Time     // start of the idle stretch (zero: not idle)
	d     time.Duration // the next sleep
	spin  time.Duration // how long to spin before sleeping (0: SpinFor)
	// Max is the longest sleep (0: BackoffMax).
	Max time.Duration
	Resched
}

// Reset is called after a round that made progress.
func (b *Backoff) Reset() { b.since, b.d = time.Time{}, BackoffMin }

// Wait is called after an idle round: it returns at once while spinning,
// or sleeps for the current back-off, returning early (at the latest after
// the sleep) when ready reports true or wake fires (either may be nil).
// With spin false it never spins: the caller says so when every CPU the
// rank may use is computing, since a spinning coordinator would take its
// time from a slot on the same core.
func (b *Backoff) Wait(spin bool, ready func() bool, wake <-chan struct{}) {
	b.WaitKick(spin, ready, wake, nil, 0)
}

// Waiter is an event count a WaitKick sleep waits on: a Kick or a Bell.
type Waiter interface {
	Wait(seen uint32, d time.Duration) bool
}

// WaitKick is wait whose sleep also ends when k's count moves past seen
// (read by the caller before its round).
func (b *Backoff) WaitKick(spin bool, ready func() bool, wake <-chan struct{}, k Waiter, seen uint32) {
	b.Resched.Check()
	if b.since.IsZero() {
		b.since = time.Now()
	}
	limit := b.spin
	if limit == 0 {
		limit = SpinFor
	}
	if spin && time.Since(b.since) < limit {
		return
	}
	if b.d == 0 {
		b.d = BackoffMin
	}
	if ready != nil && ready() {
		return
	}
	select {
	case <-wake:
		return
	default:
	}
	most := cmp.Or(b.Max, BackoffMax)
	d := min(b.d, most) // Max may have dropped since the last sleep
	if k != nil {
		k.Wait(seen, d)
	} else {
		ThreadSleep(d)
	}
	b.d = min(2*d, most)
}
