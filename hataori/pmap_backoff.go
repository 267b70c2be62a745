package hataori

import (
	"time"
)

// Back-off of an idle coordinator: for spinFor after its last progress it
// spins, polling; then it sleeps, starting at backoffMin and doubling up to
// backoffMax (the poll interval: the longest a message waits for an idle
// coordinator), so that oversubscribed ranks leave the CPU to their peers
// (MPICH does not yield inside MPI_Iprobe or a blocking receive). The spin
// does not call runtime.Gosched: on a goroutine locked to its thread (the
// coordinator always is) that hands the thread's P away and back, two
// thread wake-ups, 10–50 µs here. The sleep blocks the coordinator's
// locked OS thread in nanosleep (threadSleep), with a 1 µs timer slack for
// the call (fineTimerSlack): a Go timer this short is rounded up to about
// a millisecond by the runtime's netpoller, which would add that much
// latency to every message that arrives while the coordinator sleeps. A
// remote coordinator sleeps in a futex wait on a kick instead, which its
// slots signal when they queue a RESULT (waitKick). Variables only so that
// benchmarks can vary them.
var (
	spinFor    = 20 * time.Microsecond
	backoffMin = 10 * time.Microsecond
	backoffMax = 50 * time.Microsecond
	// slotIdleWait bounds one wait of an idle remote slot for its next
	// TASK (a futex wait on a kick: it ends at the TASK, or at a signal to
	// the thread such as the runtime's preemption, so a stop-the-world
	// does not wait for it).
	slotIdleWait = 200 * time.Microsecond
	// busyWait bounds a remote coordinator's wait while every logical
	// slot of its rank holds a batch (ended early by the first to finish):
	// the longest a CANCEL from the root, or the end of ctx, waits then.
	busyWait = time.Millisecond
)

// backoff paces a polling loop.
type backoff struct {
	since time.Time     // start of the idle stretch (zero: not idle)
	d     time.Duration // the next sleep
	spin  time.Duration // how long to spin before sleeping (0: spinFor)
}

// reset is called after a round that made progress.
func (b *backoff) reset() { b.since, b.d = time.Time{}, backoffMin }

// wait is called after an idle round: it returns at once while spinning,
// or sleeps for the current back-off, returning early (at the latest after
// the sleep) when ready reports true or wake fires (either may be nil).
// With spin false it never spins: the caller says so when every CPU the
// rank may use is computing, since a spinning coordinator would take its
// time from a slot on the same core.
func (b *backoff) wait(spin bool, ready func() bool, wake <-chan struct{}) {
	b.waitKick(spin, ready, wake, nil, 0)
}

// waitKick is wait whose sleep also ends when k's count moves past seen
// (read by the caller before its round).
func (b *backoff) waitKick(spin bool, ready func() bool, wake <-chan struct{}, k *kick, seen uint32) {
	if b.since.IsZero() {
		b.since = time.Now()
	}
	limit := b.spin
	if limit == 0 {
		limit = spinFor
	}
	if spin && time.Since(b.since) < limit {
		return
	}
	if b.d == 0 {
		b.d = backoffMin
	}
	if ready != nil && ready() {
		return
	}
	select {
	case <-wake:
		return
	default:
	}
	if k != nil {
		k.wait(seen, b.d)
	} else {
		threadSleep(b.d)
	}
	b.d = min(2*b.d, backoffMax)
}
