package hataori

import (
	"fmt"
	"sync/atomic"
)

// Executor returns the Executor that runs Pmap batches on d in mode:
// Sequential runs a batch's items in order on one worker, stopping after a
// Run that returns false; Outer spreads them over all workers and runs
// every item; Inner runs them in order on a helper goroutine (neither a
// worker nor the caller) that lends d to each item for d.Parallel, stopping
// after a Run that returns false. Enter performs MapIn's checks
// (ErrInvalidMode, ErrNoDomain, ErrDomainClosed, ErrWorkerEntry,
// ErrDomainBusy) and claims d; the executor offloads.
func (d *Domain) Executor(mode LocalMode) Executor {
	return domainExecutor{d: d, mode: mode}
}

type domainExecutor struct {
	d    *Domain
	mode LocalMode
}

func (e domainExecutor) Enter() (func(), error) {
	if !e.mode.valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidMode, int(e.mode))
	}
	release, err := e.d.admit()
	if err != nil {
		return nil, err
	}
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			release()
		}
	}, nil
}

func (e domainExecutor) Offloads() bool { return true }

func (e domainExecutor) Start(b Batch) {
	var t *indexTask
	run := b.Run
	if e.mode == Outer {
		t = newIndexTask(b.N, func(slot, i int) { run(slot, i) }, b.Done)
	} else {
		t = newIndexTask(b.N, func(slot, i int) {
			if !run(slot, i) {
				t.stop.Store(true)
			}
		}, b.Done)
	}
	e.d.launch(t, e.mode, false)
}

func (e domainExecutor) Slots() int {
	if e.mode == Outer && e.d != nil {
		return len(e.d.workers)
	}
	return 1
}

// inlineExecutor returns the executor of MPI-only ranks (no domain): it
// runs each batch synchronously on the calling goroutine, in order, and
// stops after a Run that returns false.
func inlineExecutor() Executor { return inlineExec{} }

type inlineExec struct{}

func (inlineExec) Enter() (func(), error) { return func() {}, nil }

func (inlineExec) Offloads() bool { return false }

func (inlineExec) Start(b Batch) {
	defer b.Done()
	for i := range b.N {
		if !b.Run(0, i) {
			return
		}
	}
}

func (inlineExec) Slots() int { return 1 }
