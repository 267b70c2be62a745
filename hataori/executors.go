package hataori

import (
	"fmt"
	"sync"

	"github.com/hataori/hataori-go/internal/seam"
)

// domainExec runs the slots of a collective call on a domain in one local
// mode: Outer offers one slot per worker (each worker takes whole batches
// and runs their items in order); Sequential one slot on worker 0; Inner
// one slot on a helper goroutine (neither a worker nor the caller) to
// which the whole domain is lent, so its items reach every worker through
// d.Parallel. With short set (the short path, pmap_short.go) it claims d
// for the call but offers one slot that the coordinator runs itself.
type domainExec struct {
	d     *Domain
	mode  LocalMode
	short bool
}

// executor returns the slot executor of d in mode (Auto: Outer).
func (d *Domain) executor(mode LocalMode) seam.Executor {
	if d != nil && d.foreign != nil {
		return d.foreign.exec
	}
	return domainExec{d: d, mode: mode.resolve(true)}
}

func (e domainExec) Slots() int {
	if e.mode == Outer && e.d != nil && !e.short {
		return len(e.d.workers)
	}
	return 1
}

func (e domainExec) Threads() int {
	if e.mode == Sequential || e.d == nil || e.short {
		return 1
	}
	return len(e.d.workers)
}

func (e domainExec) Offloads() bool { return !e.short }

// Run performs MapIn's entry checks (ErrInvalidMode, ErrNoDomain,
// ErrDomainClosed, ErrWorkerEntry, ErrDomainBusy), claims d, runs the
// slots and the coordinator, and releases d once every slot has returned.
func (e domainExec) Run(work func(slot int), coord func()) error {
	if !e.mode.valid() {
		return fmt.Errorf("%w: %d", ErrInvalidMode, int(e.mode))
	}
	release, err := e.d.admit()
	if err != nil {
		return err
	}
	defer release()
	if e.short {
		coord()
		return nil
	}
	var wg sync.WaitGroup
	switch e.mode {
	case Outer:
		wg.Add(len(e.d.workers))
		for _, w := range e.d.workers {
			w.jobs <- slotTask{work: work, wg: &wg}
		}
	case Inner:
		wg.Add(1)
		e.d.lent.Store(true)
		go func() {
			defer wg.Done()
			defer e.d.lent.Store(false)
			work(0)
		}()
	default:
		wg.Add(1)
		e.d.workers[0].jobs <- slotTask{work: work, wg: &wg}
	}
	// However coord leaves (it may call runtime.Goexit in a test), the
	// slots are joined before the domain is released.
	defer wg.Wait()
	coord()
	return nil
}

// slotTask is one slot's loop of a collective call, run by a worker: under
// Outer, slot w runs on worker w; otherwise slot 0 runs on worker 0.
type slotTask struct {
	work func(slot int)
	wg   *sync.WaitGroup
}

func (t slotTask) runOn(worker int) {
	defer t.wg.Done()
	t.work(worker)
}

// helperExec is the executor of an MPI-only rank (no domain): one slot on
// a helper goroutine (not a domain worker), so that the coordinator keeps
// answering while a callback runs. With inline set (MPI provides only
// MPI_THREAD_SINGLE, so no other thread may run while MPI is in use) it
// offloads nothing: the coordinator evaluates each batch itself (also on
// the short path, pmap_short.go).
type helperExec struct{ inline bool }

func (helperExec) Slots() int       { return 1 }
func (helperExec) Threads() int     { return 1 }
func (e helperExec) Offloads() bool { return !e.inline }

func (e helperExec) Run(work func(slot int), coord func()) error {
	if e.inline {
		coord()
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(0)
	}()
	defer func() { <-done }()
	coord()
	return nil
}
