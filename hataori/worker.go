package hataori

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// domainWorker is one worker slot of a domain. Its jobs channel outlives
// the goroutine serving it: a worker whose callback called runtime.Goexit
// is replaced by a new goroutine on the same slot.
type domainWorker struct {
	slot int
	cpu  int // pinned CPU, or -1
	tid  atomic.Int64
	jobs chan workerTask
}

// workerTask is what a worker runs: a share of one batch or Parallel call.
type workerTask interface{ runOn(slot int) }

type workerReport struct {
	slot int
	err  error
}

// workerThreads maps the OS thread id (threadID) of every live worker to
// its *Domain. A worker goroutine is locked to its thread, so no other
// goroutine ever runs on a thread listed here: "am I on a worker?" is a
// lookup of the current thread id.
var workerThreads sync.Map

// liveWorkers counts running worker goroutines of every domain (tests).
var liveWorkers atomic.Int64

// onWorker reports whether the calling goroutine is a worker of any domain.
func onWorker() bool {
	_, ok := workerThreads.Load(threadID())
	return ok
}

// onWorker reports whether the calling goroutine is a worker of d.
func (d *Domain) onWorker() bool {
	v, ok := workerThreads.Load(threadID())
	return ok && v.(*Domain) == d
}

// runWorker is a worker goroutine: it locks its thread, pins it (Managed
// mode), registers, reports to NewDomain (report is nil for a replacement)
// and serves tasks until the domain closes its jobs channel.
func (d *Domain) runWorker(w *domainWorker, report chan<- workerReport, hook func(int)) {
	// Never unlocked: when the goroutine exits, its thread exits too, so a
	// pinned CPU mask never reaches another goroutine.
	runtime.LockOSThread()
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
	tid := threadID()
	w.tid.Store(int64(tid))
	if err == nil {
		workerThreads.Store(tid, d)
		defer workerThreads.Delete(tid)
	}
	if report != nil {
		report <- workerReport{slot: w.slot, err: err}
	}
	if err != nil {
		return
	}
	d.serve(w)
}

// serve runs tasks in order. A callback that calls runtime.Goexit ends
// this goroutine (and its thread); the task's own deferred bookkeeping has
// run by then, and a replacement worker takes over the slot.
func (d *Domain) serve(w *domainWorker) {
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
