package hataori

import (
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
)

// domainWorker is one worker of a domain, by index (0 … Workers-1). Its
// jobs channel outlives the goroutine serving it: a worker whose callback
// called runtime.Goexit is replaced by a new goroutine with the same index.
type domainWorker struct {
	index int
	cpu   int          // pinned CPU, or -1
	tid   atomic.Int64 // kernel thread id of a pinned (locked) worker, else 0
	jobs  chan workerTask
}

// workerTask is what a worker runs: a share of one batch or Parallel call,
// or a Pmap slot's loop; runOn gets the worker's index.
type workerTask interface{ runOn(worker int) }

type workerReport struct {
	worker int
	err    error
}

// liveWorkers counts running worker goroutines of every domain (tests).
var liveWorkers atomic.Int64

// A worker is recognised by its stack, not by its thread: every worker
// goroutine runs its tasks inside serveWorker, so "am I on a worker?" asks
// whether serveWorker is among the calling goroutine's frames. This holds
// for workers locked to their threads (Managed placement) and for the
// unlocked workers of the other domains alike, on every platform, and a
// goroutine that a callback starts is not a worker (its stack starts
// afresh), as a thread a Rayon job spawns is not a Rayon worker. The walk
// costs about 0.1 µs per frame and runs only at the entry of MapIn, Pmap,
// Parallel and Close.
var serveWorkerEntry = reflect.ValueOf(serveWorker).Pointer()

// onWorker reports whether the calling goroutine is a worker of any domain.
func onWorker() bool {
	var pcs [64]uintptr
	for skip := 2; ; {
		n := runtime.Callers(skip, pcs[:])
		for _, pc := range pcs[:n] {
			if f := runtime.FuncForPC(pc - 1); f != nil && f.Entry() == serveWorkerEntry {
				return true
			}
		}
		if n < len(pcs) {
			return false
		}
		skip += n
	}
}

// runWorker is a worker goroutine: in Managed mode it locks its thread and
// pins it; it reports to NewDomain (report is nil for a replacement) and
// serves tasks until the domain closes its jobs channel.
//
// Only pinned workers are locked to OS threads: a hand-off to a locked
// goroutine wakes its own thread (10–50 µs here), while an unlocked worker
// is woken by the runtime on any thread in well under a microsecond.
func (d *Domain) runWorker(w *domainWorker, report chan<- workerReport, hook func(int)) {
	if d.pinOn {
		// Never unlocked: when the goroutine exits, its thread exits too,
		// so a pinned CPU mask never reaches another goroutine.
		runtime.LockOSThread()
	}
	defer d.workerExited()
	if hook != nil {
		hook(w.index)
	}
	var err error
	if d.pinOn {
		err = d.pin(w.cpu)
	}
	if err != nil && report == nil {
		// A replacement that cannot pin still serves, unverified.
		d.placement.Store(int32(CallerDeclared))
		err = nil
	}
	if d.pinOn {
		w.tid.Store(int64(threadID()))
	}
	if report != nil {
		report <- workerReport{worker: w.index, err: err}
	}
	if err != nil {
		return
	}
	serveWorker(d, w)
}

// serveWorker runs w's tasks in order; its frame marks a worker (see
// onWorker). A callback that calls runtime.Goexit ends this goroutine (and,
// when locked, its thread); the task's own deferred bookkeeping has run by
// then, and a replacement worker takes over its index.
//
//go:noinline
func serveWorker(d *Domain, w *domainWorker) {
	clean := false
	defer func() {
		if !clean {
			d.workerStarting()
			go d.runWorker(w, nil, nil)
		}
	}()
	for t := range w.jobs {
		t.runOn(w.index)
	}
	clean = true
}

// workerStarting counts a worker goroutine about to start; workerExited
// uncounts it as its last act.
func (d *Domain) workerStarting() {
	d.wg.Add(1)
	liveWorkers.Add(1)
}

func (d *Domain) workerExited() {
	liveWorkers.Add(-1)
	d.wg.Done()
}

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

// indexTask is the one unit of work the workers run, for MapIn, Parallel
// and the domain executors alike: it hands out the indices 0..n-1, one at a
// time, to every goroutine running runOn, until they are exhausted or stop
// is set. A panic (or runtime.Goexit) in body is recorded, stops the
// handing out, and ends that goroutine's share; onDone runs once, after the
// last share has ended.
type indexTask struct {
	next   atomic.Int64
	_      [56]byte // keep the hot counter on its own cache line
	stop   atomic.Bool
	active atomic.Int32 // shares still running
	n      int64
	body   func(worker, i int)
	loop   func(worker int) // replaces the loop below, calling no body (MapIn)
	onDone func()

	mu    sync.Mutex
	panic *PanicError // the first panic, read after onDone
}

func newIndexTask(n int, body func(worker, i int), onDone func()) *indexTask {
	return &indexTask{n: int64(n), body: body, onDone: onDone}
}

func (t *indexTask) runOn(worker int) {
	normal := false
	defer func() {
		if !normal {
			t.fail(recover())
		}
		if t.active.Add(-1) == 0 {
			t.onDone()
		}
	}()
	if t.loop != nil {
		t.loop(worker)
	} else {
		for !t.stop.Load() {
			i := t.next.Add(1) - 1
			if i >= t.n {
				break
			}
			t.body(worker, int(i))
		}
	}
	normal = true
}

// fail records a panic (or Goexit, r == nil). It is called from the
// deferred function that recovered, so the stack still shows the panic.
func (t *indexTask) fail(r any) {
	t.stop.Store(true)
	p := capturePanic(r)
	t.mu.Lock()
	if t.panic == nil {
		t.panic = p
	}
	t.mu.Unlock()
}

// launch runs t as mode says: Sequential on worker 0; Outer shared by
// min(n, workers) workers; Inner on one goroutine that is not a worker,
// the caller's own when inline is set (else a new one), with the domain
// lent for Parallel until just before onDone. The caller holds d's
// admission; launch returns at once unless inline is set.
func (d *Domain) launch(t *indexTask, mode LocalMode, inline bool) {
	switch mode {
	case Outer:
		k := max(1, min(int(t.n), len(d.workers)))
		t.active.Store(int32(k))
		for _, w := range d.workers[:k] {
			w.jobs <- t
		}
	case Inner:
		t.active.Store(1)
		done := t.onDone
		t.onDone = func() {
			d.lent.Store(false)
			done()
		}
		d.lent.Store(true)
		if inline {
			t.runOn(0)
		} else {
			go t.runOn(0)
		}
	default:
		t.active.Store(1)
		d.workers[0].jobs <- t
	}
}
