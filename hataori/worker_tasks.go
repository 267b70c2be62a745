package hataori

import (
	"sync"
	"sync/atomic"
)

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
	body   func(slot, i int)
	loop   func(slot int) // replaces the loop below, calling no body (MapIn)
	onDone func()

	mu    sync.Mutex
	panic *PanicError // the first panic, read after onDone
}

func newIndexTask(n int, body func(slot, i int), onDone func()) *indexTask {
	return &indexTask{n: int64(n), body: body, onDone: onDone}
}

func (t *indexTask) runOn(slot int) {
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
		t.loop(slot)
	} else {
		for !t.stop.Load() {
			i := t.next.Add(1) - 1
			if i >= t.n {
				break
			}
			t.body(slot, int(i))
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
