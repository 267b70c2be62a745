package hataori

import (
	"runtime"
	"time"
)

// Back-off of an idle coordinator: for spinFor after its last progress it
// only yields; then it sleeps, starting at backoffMin and doubling up to
// backoffMax, so that
// oversubscribed ranks leave the CPU to their peers (MPICH does not yield
// inside MPI_Iprobe or a blocking receive, and runtime.Gosched does not
// yield the CPU to other processes). The sleep blocks the coordinator's
// locked OS thread in nanosleep (threadSleep): a Go timer this short is
// rounded up to about a millisecond by the runtime's netpoller, which adds
// that much latency to every message that arrives while the coordinator
// sleeps. Variables only so that benchmarks can vary them.
var (
	spinFor    = 50 * time.Microsecond
	backoffMin = 20 * time.Microsecond
	backoffMax = 100 * time.Microsecond
)

// backoff paces a polling loop.
type backoff struct {
	since time.Time // start of the idle stretch (zero: not idle)
	d     time.Duration
}

// reset is called after a round that made progress.
func (b *backoff) reset() { b.since, b.d = time.Time{}, backoffMin }

// wait is called after an idle round: it yields, or sleeps for the current
// back-off, and reports whether wake (nil never fires) has fired, checking
// before and after the sleep; a wake during the sleep is seen at most
// backoffMax late.
func (b *backoff) wait(wake <-chan struct{}) bool {
	if b.since.IsZero() {
		b.since = time.Now()
	}
	if time.Since(b.since) < spinFor {
		runtime.Gosched()
		return false
	}
	if b.d == 0 {
		b.d = backoffMin
	}
	select {
	case <-wake:
		return true
	default:
	}
	threadSleep(b.d)
	b.d = min(2*b.d, backoffMax)
	select {
	case <-wake:
		return true
	default:
		return false
	}
}

// waitMessage polls for a scheduler message (with back-off) and returns
// once one is waiting; the caller then receives it.
func (k *collective) waitMessage() {
	var b backoff
	for {
		ok, _, err := k.iprobe(tagPmap)
		if err != nil {
			k.abortTransport(err)
		}
		if ok {
			return
		}
		b.wait(nil)
	}
}
