package hataori

import (
	"reflect"
	"runtime"
	"sync/atomic"
)

// domainWorker is one worker slot of a domain. Its jobs channel outlives
// the goroutine serving it: a worker whose callback called runtime.Goexit
// is replaced by a new goroutine on the same slot.
type domainWorker struct {
	slot int
	cpu  int          // pinned CPU, or -1
	tid  atomic.Int64 // kernel thread id of a pinned (locked) worker, else 0
	jobs chan workerTask
}

// workerTask is what a worker runs: a share of one batch or Parallel call.
type workerTask interface{ runOn(slot int) }

type workerReport struct {
	slot int
	err  error
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
		hook(w.slot)
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
		report <- workerReport{slot: w.slot, err: err}
	}
	if err != nil {
		return
	}
	serveWorker(d, w)
}

// serveWorker runs w's tasks in order; its frame marks a worker (see
// onWorker). A callback that calls runtime.Goexit ends this goroutine (and,
// when locked, its thread); the task's own deferred bookkeeping has run by
// then, and a replacement worker takes over the slot.
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
		t.runOn(w.slot)
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
