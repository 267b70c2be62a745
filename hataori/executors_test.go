package hataori

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// runSlots runs e with a work that records, for each slot, that it ran and
// whether it ran on a domain worker, and waits (bounded) inside coord until
// every slot is running at once; it returns the slots seen and coord's
// verdict.
func runSlots(t *testing.T, e interface {
	Slots() int
	Run(func(int), func()) error
}, during func()) (map[int]bool, error) {
	t.Helper()
	n := e.Slots()
	var mu sync.Mutex
	onWorkerBySlot := map[int]bool{}
	var inside sync.WaitGroup
	inside.Add(n)
	release := make(chan struct{})
	work := func(s int) {
		w := onWorker()
		mu.Lock()
		_, dup := onWorkerBySlot[s]
		onWorkerBySlot[s] = w
		mu.Unlock()
		if dup {
			t.Errorf("slot %d ran twice", s)
		}
		inside.Done()
		<-release
	}
	var coordErr error
	err := e.Run(work, func() {
		all := make(chan struct{})
		go func() { inside.Wait(); close(all) }()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			coordErr = fmt.Errorf("only some of %d slots ran at once", n)
		}
		if during != nil {
			during()
		}
		close(release)
	})
	if err == nil {
		err = coordErr
	}
	return onWorkerBySlot, err
}

// Every slot of a domain executor runs at once: one per worker in Outer
// mode, on the workers; one on worker 0 in Sequential mode; one off the
// workers in Inner mode, with the domain lent for Parallel.
func TestDomainExecutorSlots(t *testing.T) {
	d := newTestDomain(t, 3)
	for _, tt := range []struct {
		mode          LocalMode
		slots, thread int
		onWorker      bool
	}{{Sequential, 1, 1, true}, {Outer, 3, 3, true}, {Inner, 1, 3, false}} {
		t.Run(tt.mode.String(), func(t *testing.T) {
			e := d.executor(tt.mode)
			if e.Slots() != tt.slots || e.Threads() != tt.thread || !e.Offloads() {
				t.Fatalf("Slots %d Threads %d Offloads %v, want %d %d true", e.Slots(), e.Threads(), e.Offloads(), tt.slots, tt.thread)
			}
			seen, err := runSlots(t, e, func() {
				// A second call while the slots run is refused at once.
				if err := e.Run(func(int) { t.Error("work of a refused Run ran") }, func() { t.Error("coord of a refused Run ran") }); !errors.Is(err, ErrDomainBusy) {
					t.Errorf("second Run: %v, want ErrDomainBusy", err)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != tt.slots {
				t.Fatalf("slots seen %v, want %d", seen, tt.slots)
			}
			for s, w := range seen {
				if w != tt.onWorker {
					t.Errorf("slot %d on a worker: %v, want %v", s, w, tt.onWorker)
				}
			}
		})
	}
	// The domain is free again afterwards.
	if _, err := MapIn(t.Context(), d, Outer, []int{1, 2}, func(x int) (int, error) { return x, nil }); err != nil {
		t.Fatal(err)
	}
}

// An Inner slot may use the whole domain through Parallel; Outer and
// Sequential slots are workers and may not.
func TestDomainExecutorInnerLends(t *testing.T) {
	d := newTestDomain(t, 2)
	for _, mode := range allModes {
		var got error
		var ran atomic.Int32
		err := d.executor(mode).Run(func(s int) {
			if s == 0 {
				got = d.Parallel(4, func(int) { ran.Add(1) })
			}
		}, func() {})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case mode == Inner && (got != nil || ran.Load() != 4):
			t.Errorf("Inner: Parallel = %v, ran %d of 4", got, ran.Load())
		case mode != Inner && !errors.Is(got, ErrWorkerEntry):
			t.Errorf("%v: Parallel from a slot = %v, want ErrWorkerEntry", mode, got)
		}
	}
	if err := d.Parallel(1, func(int) {}); !errors.Is(err, ErrNotLent) {
		t.Errorf("Parallel after the call: %v, want ErrNotLent", err)
	}
}

func TestDomainExecutorRunErrors(t *testing.T) {
	never := func(int) { t.Error("work ran") }
	nocoord := func() { t.Error("coord ran") }
	var nilDomain *Domain
	if err := nilDomain.executor(Outer).Run(never, nocoord); !errors.Is(err, ErrNoDomain) {
		t.Errorf("nil domain: %v", err)
	}
	d := newTestDomain(t, 1)
	if err := d.executor(LocalMode(-1)).Run(never, nocoord); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("invalid mode: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.executor(Outer).Run(never, nocoord); !errors.Is(err, ErrDomainClosed) {
		t.Errorf("closed domain: %v", err)
	}
}

// The MPI-only executor runs its one slot on a helper goroutine, at the
// same time as the coordinator; inline, it runs no slot at all.
func TestHelperExecutor(t *testing.T) {
	e := helperExec{}
	if !e.Offloads() || e.Slots() != 1 || e.Threads() != 1 {
		t.Fatalf("Offloads %v Slots %d Threads %d", e.Offloads(), e.Slots(), e.Threads())
	}
	seen, err := runSlots(t, e, nil)
	if err != nil || len(seen) != 1 || seen[0] {
		t.Fatalf("slots %v, err %v; want slot 0 off the workers", seen, err)
	}
	in := helperExec{inline: true}
	coordRan := false
	if err := in.Run(func(int) { t.Error("inline executor ran a slot") }, func() { coordRan = true }); err != nil || !coordRan || in.Offloads() {
		t.Fatalf("inline: err %v, coord ran %v, Offloads %v", err, coordRan, in.Offloads())
	}
}
