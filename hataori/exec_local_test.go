package hataori

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// batchRecorder builds a Batch that records which items ran, on which
// slots, and how often Done was called.
type batchRecorder struct {
	mu    sync.Mutex
	ran   []int
	slots map[int]bool
	done  atomic.Int32
	ended chan struct{}
}

func newBatch(n int, run func(i int) bool) (*batchRecorder, Batch) {
	r := &batchRecorder{slots: map[int]bool{}, ended: make(chan struct{})}
	return r, Batch{
		N: n,
		Run: func(slot, i int) bool {
			r.mu.Lock()
			r.ran = append(r.ran, i)
			r.slots[slot] = true
			r.mu.Unlock()
			return run(i)
		},
		Done: func() {
			if r.done.Add(1) == 1 {
				close(r.ended)
			}
		},
	}
}

// wait waits (bounded) for Done, then gives a late second Done a chance.
func (r *batchRecorder) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Done was not called")
	}
	time.Sleep(5 * time.Millisecond)
	if n := r.done.Load(); n != 1 {
		t.Fatalf("Done called %d times", n)
	}
}

func TestDomainExecutor(t *testing.T) {
	d := newTestDomain(t, 3)
	tests := []struct {
		mode      LocalMode
		n         int
		stopAt    int // Run returns false for this item
		wantRan   []int
		wantSlots int
	}{
		{Sequential, 6, 2, []int{0, 1, 2}, 1},
		{Sequential, 0, -1, nil, 1},
		{Outer, 40, 2, seq(40), 3},
		{Outer, 0, -1, nil, 3},
		{Outer, 2, -1, seq(2), 3},
		{Inner, 6, 2, []int{0, 1, 2}, 1},
		{Inner, 0, -1, nil, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/n=%d", tt.mode, tt.n), func(t *testing.T) {
			e := d.Executor(tt.mode)
			if !e.Offloads() || e.Slots() != tt.wantSlots {
				t.Fatalf("Offloads = %v Slots = %d, want true, %d", e.Offloads(), e.Slots(), tt.wantSlots)
			}
			release, err := e.Enter()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Enter(); !errors.Is(err, ErrDomainBusy) {
				t.Fatalf("second Enter: %v, want ErrDomainBusy", err)
			}
			// Two batches under one admission, as Pmap does.
			for range 2 {
				r, b := newBatch(tt.n, func(i int) bool { return i != tt.stopAt })
				e.Start(b)
				r.wait(t)
				slices.Sort(r.ran)
				if !slices.Equal(r.ran, tt.wantRan) {
					t.Fatalf("ran %v, want %v", r.ran, tt.wantRan)
				}
				for s := range r.slots {
					if s < 0 || s >= e.Slots() {
						t.Fatalf("slot %d outside [0, %d)", s, e.Slots())
					}
				}
			}
			release()
			release() // a second call is harmless
			r2, err := e.Enter()
			if err != nil {
				t.Fatalf("Enter after release: %v", err)
			}
			r2()
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// Start returns before the batch ends, and Inner items run off the
// workers with the domain lent for Parallel.
func TestDomainExecutorOffloads(t *testing.T) {
	d := newTestDomain(t, 2)
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			e := d.Executor(mode)
			release, err := e.Enter()
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			hold := make(chan struct{})
			var onWorkerSeen, parallelErr atomic.Value
			r, b := newBatch(1, func(int) bool {
				<-hold
				onWorkerSeen.Store(d.onWorker())
				err := d.Parallel(2, func(int) {})
				parallelErr.Store(fmt.Sprint(err))
				return true
			})
			e.Start(b) // must not block on the held item
			close(hold)
			r.wait(t)
			wantWorker := mode != Inner
			wantErr := "<nil>"
			if wantWorker {
				wantErr = ErrWorkerEntry.Error()
			}
			if onWorkerSeen.Load() != wantWorker || parallelErr.Load() != wantErr {
				t.Fatalf("on worker = %v, Parallel = %v; want %v, %v", onWorkerSeen.Load(), parallelErr.Load(), wantWorker, wantErr)
			}
		})
	}
}

func TestDomainExecutorEnterErrors(t *testing.T) {
	var nilDomain *Domain
	if _, err := nilDomain.Executor(Outer).Enter(); !errors.Is(err, ErrNoDomain) {
		t.Errorf("nil domain: %v", err)
	}
	d := newTestDomain(t, 1)
	if _, err := d.Executor(LocalMode(-1)).Enter(); !errors.Is(err, ErrInvalidMode) {
		t.Errorf("invalid mode: %v", err)
	}
}

func TestInlineExecutor(t *testing.T) {
	e := inlineExecutor()
	if e.Offloads() || e.Slots() != 1 {
		t.Fatalf("Offloads = %v Slots = %d", e.Offloads(), e.Slots())
	}
	release, err := e.Enter()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, tt := range []struct {
		n, stopAt int
		want      []int
	}{{5, 1, []int{0, 1}}, {3, -1, seq(3)}, {0, -1, nil}} {
		caller := threadIDLocked(t)
		var runThreads []int
		r, b := newBatch(tt.n, func(i int) bool {
			runThreads = append(runThreads, threadID())
			return i != tt.stopAt
		})
		e.Start(b)
		// Synchronous: everything, Done included, happened before Start returned.
		if r.done.Load() != 1 || !slices.Equal(r.ran, tt.want) {
			t.Fatalf("done = %d ran = %v, want 1 and %v", r.done.Load(), r.ran, tt.want)
		}
		for _, tid := range runThreads {
			if tid != caller {
				t.Fatalf("item ran on thread %d, not the caller's %d", tid, caller)
			}
		}
	}
}

// threadIDLocked locks the test goroutine to its thread for the rest of
// the test and returns the thread's id.
func threadIDLocked(t *testing.T) int {
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	return threadID()
}
