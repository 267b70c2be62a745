package hataori

// Parallel runs body(i) for every i in [0, n) on the domain's workers and
// returns when all have returned. It is the explicit handle through which
// an Inner item uses the whole domain: it is valid only while d is lent to
// an Inner item (MapIn with Inner, or a Pmap batch in Inner mode), from
// the item's goroutine or a goroutine it started, one Parallel call at a
// time.
//
// It fails with ErrNoDomain for a nil domain, ErrWorkerEntry when called
// from a worker of any domain, ErrNotLent (ErrDomainClosed after Close)
// when no Inner item holds d, and ErrDomainBusy while another Parallel
// call on d is running. Indices are handed out one at a time, so body
// calls may finish in any order; body must synchronise what it shares.
//
// A panic in body stops the handing out of indices and, after every worker
// has finished, is re-raised on the caller as a *PanicError (which MapIn
// in turn re-raises on its caller).
func (d *Domain) Parallel(n int, body func(i int)) error {
	if !d.made() {
		return ErrNoDomain
	}
	if body == nil {
		return ErrNilCallback
	}
	if onWorker() {
		return ErrWorkerEntry
	}
	if !d.lent.Load() {
		if d.closed.Load() {
			return ErrDomainClosed
		}
		return ErrNotLent
	}
	if !d.parBusy.CompareAndSwap(false, true) {
		return ErrDomainBusy
	}
	defer d.parBusy.Store(false)
	if n <= 0 {
		return nil
	}
	done := make(chan struct{})
	t := newIndexTask(n, func(_, i int) { body(i) }, func() { close(done) })
	d.launch(t, Outer, false)
	<-done
	if t.panic != nil {
		repanic(t.panic)
	}
	return nil
}
