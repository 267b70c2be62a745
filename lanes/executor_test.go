package lanes_test

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

// startAndWait starts b on x and waits (bounded) for its Done.
func startAndWait(t *testing.T, x hataori.Executor, n int, run func(slot, i int) bool) {
	t.Helper()
	var dones atomic.Int32
	done := make(chan struct{})
	x.Start(hataori.Batch{N: n, Run: run, Done: func() {
		if dones.Add(1) == 1 {
			close(done)
		}
	}})
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("batch never called Done")
	}
	if d := dones.Load(); d != 1 {
		t.Fatalf("Done called %d times", d)
	}
}

func TestExecutorDealsBatchesToLanes(t *testing.T) {
	engines := twoEngines(t)
	l, err := lanes.New(engines)
	if err != nil {
		t.Fatal(err)
	}
	x := l.Executor()
	if !x.Offloads() || x.Slots() != 2 {
		t.Fatalf("Offloads %v, Slots %d; want true, 2", x.Offloads(), x.Slots())
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	caller := unix.Gettid()

	release, err := x.Enter()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Enter(); !errors.Is(err, lanes.ErrBusy) {
		t.Fatalf("second Enter: %v, want ErrBusy", err)
	}
	var threads threadLog[*poolEngine] // slot i is lent engine i
	for batch, n := range []int{0, 1, 7, 100, 3} {
		calls := make([]atomic.Int32, n)
		startAndWait(t, x, n, func(slot, i int) bool {
			calls[i].Add(1)
			if slot < 0 || slot >= 2 {
				t.Errorf("slot %d out of range", slot)
				return false
			}
			if _, err := engines[slot].sumSquares(i); err != nil {
				t.Error(err)
			}
			threads.record(engines[slot])
			return false // ignored: lanes evaluate every item
		})
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("batch %d: item %d run %d times", batch, i, c)
			}
		}
	}
	release()
	threads.check(t, caller) // during one Enter, each slot keeps one thread of its own

	// Released: the lanes can be entered again, and run again.
	release2, err := x.Enter()
	if err != nil {
		t.Fatalf("Enter after release: %v", err)
	}
	startAndWait(t, x, 5, func(slot, i int) bool { return true })
	release2()
}

func TestExecutorReleaseReraisesAfterJoin(t *testing.T) {
	l := newLanes(t)
	x := l.Executor()
	release, err := x.Enter()
	if err != nil {
		t.Fatal(err)
	}
	var finished atomic.Int32
	// Run must not panic by contract; if it does, the batch still ends
	// and the release re-raises after joining the lanes.
	startAndWait(t, x, 10, func(slot, i int) bool {
		defer finished.Add(1)
		if i == 3 {
			panic("contract violation")
		}
		return true
	})
	if finished.Load() != 10 {
		t.Fatalf("%d items finished, want 10", finished.Load())
	}
	r := func() (r any) {
		defer func() { r = recover() }()
		release()
		return nil
	}()
	pe, ok := r.(*lanes.PanicError)
	if !ok || pe.Value != "contract violation" {
		t.Fatalf("release recovered %#v, want the Run panic", r)
	}
	release, err = x.Enter()
	if err != nil {
		t.Fatalf("Enter after a re-raised panic: %v", err)
	}
	release()
}
