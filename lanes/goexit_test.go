package lanes_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

// exitsByGoexit runs fn (bounded) on a goroutine of its own and reports
// whether that goroutine left through runtime.Goexit rather than by
// returning or panicking.
func exitsByGoexit(t *testing.T, fn func()) bool {
	t.Helper()
	goexited := false
	r := bound(t, func() {
		// A Goexit skips the recover in bound and runs this deferred
		// call with returned still false, and no panic to recover.
		returned, panicked := false, true
		defer func() {
			if !returned && !panicked {
				goexited = true
			}
		}()
		func() {
			defer func() {
				r := recover()
				if r == nil {
					panicked = false
					return
				}
				panic(r) // for bound to report

			}()
			fn()
		}()
		returned = true
	})
	if r != nil {
		t.Fatalf("fn panicked with %v, want a Goexit", r)
	}
	return goexited
}

// startBatch starts an n-item batch on x and returns a channel closed on
// its (first) Done and the Done counter.
func startBatch(x hataori.Executor, n int, run func(slot, i int) bool) (<-chan struct{}, *atomic.Int32) {
	var dones atomic.Int32
	done := make(chan struct{})
	x.Start(hataori.Batch{N: n, Run: run, Done: func() {
		if dones.Add(1) == 1 {
			close(done)
		}
	}})
	return done, &dones
}

func TestExecutorGoexitSingleLane(t *testing.T) {
	l, err := lanes.New([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	x := l.Executor()
	release, err := x.Enter()
	if err != nil {
		t.Fatal(err)
	}
	ran := make([]atomic.Int32, 4)
	var badSlot atomic.Int32
	// The only lane Goexits on item 0: the batch must still end, with the
	// other items run by the lane's replacement.
	startAndWait(t, x, 4, func(slot, i int) bool {
		if slot != 0 {
			badSlot.Store(1)
		}
		ran[i].Add(1)
		if i == 0 {
			runtime.Goexit()
		}
		return true
	})
	for i := range ran {
		if c := ran[i].Load(); c != 1 {
			t.Fatalf("item %d run %d times, want 1", i, c)
		}
	}
	// The executor stays usable: the next batch runs in full on slot 0.
	var next atomic.Int32
	startAndWait(t, x, 5, func(slot, i int) bool {
		if slot != 0 {
			badSlot.Store(1)
		}
		next.Add(1)
		return true
	})
	if next.Load() != 5 || badSlot.Load() != 0 {
		t.Fatalf("next batch ran %d items (want 5); slot out of range: %v", next.Load(), badSlot.Load() != 0)
	}
	// The Goexit is re-raised as a Goexit by the release, after the join.
	if !exitsByGoexit(t, release) {
		t.Fatal("release did not re-raise the Goexit")
	}
	release, err = x.Enter()
	if err != nil {
		t.Fatalf("Enter after the Goexit: %v", err)
	}
	startAndWait(t, x, 3, func(int, int) bool { return true })
	release()
}

func TestExecutorGoexitEveryLane(t *testing.T) {
	l := newLanes(t)
	x := l.Executor()
	release, err := x.Enter()
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	ran := make([]atomic.Int32, n)
	var both atomic.Int32
	bothIn := make(chan struct{})
	var slots [2]atomic.Int32
	// Items 0 and 1 wait for each other, so both lanes hold one, and
	// both lanes Goexit at once; nothing is left to run the rest but the
	// lanes' replacements.
	done, dones := startBatch(x, n, func(slot, i int) bool {
		slots[slot].Add(1)
		ran[i].Add(1)
		if i < 2 {
			if both.Add(1) == 2 {
				close(bothIn)
			}
			<-bothIn
			runtime.Goexit()
		}
		return true
	})
	if r := bound(t, func() { <-done }); r != nil {
		t.Fatal(r)
	}
	if !exitsByGoexit(t, release) { // joins every lane first
		t.Fatal("release did not re-raise the Goexit")
	}
	if d := dones.Load(); d != 1 {
		t.Fatalf("Done called %d times, want 1", d)
	}
	for i := range ran {
		if c := ran[i].Load(); c != 1 {
			t.Fatalf("item %d run %d times, want 1", i, c)
		}
	}
	if slots[0].Load() == 0 || slots[1].Load() == 0 {
		t.Fatalf("items per slot %d, %d: both lanes should have run items", slots[0].Load(), slots[1].Load())
	}
}

func TestMapInLanesGoexit(t *testing.T) {
	for _, count := range []int{1, 2} {
		engines := twoEngines(t)[:count]
		l, err := lanes.New(engines)
		if err != nil {
			t.Fatal(err)
		}
		items := make([]int, 40)
		for i := range items {
			items[i] = i
		}
		var inFlight, atExit atomic.Int64
		atExit.Store(-1)
		goexited := exitsByGoexit(t, func() {
			defer func() { atExit.Store(inFlight.Load()) }()
			_, _ = lanes.MapInLanes(context.Background(), l, items, func(x int, e *poolEngine) (int64, error) {
				inFlight.Add(1)
				defer inFlight.Add(-1)
				if x == 5 {
					runtime.Goexit()
				}
				return e.sumSquares(x)
			})
			t.Error("MapInLanes returned instead of re-raising the Goexit")
		})
		if !goexited {
			t.Fatalf("%d lanes: the caller did not Goexit", count)
		}
		if a := atExit.Load(); a != 0 {
			t.Fatalf("%d lanes: %d callbacks in flight when the caller left", count, a)
		}
		got, err := lanes.MapInLanes(context.Background(), l, items, sumSquares)
		if err != nil {
			t.Fatalf("%d lanes, after the Goexit: %v", count, err)
		}
		for i, x := range items {
			if got[i] != closedForm(x) {
				t.Fatalf("%d lanes, after the Goexit: result %d = %d", count, i, got[i])
			}
		}
	}
}

func TestRunLaneGoexit(t *testing.T) {
	l := newLanes(t)
	var joined atomic.Int64
	var atExit atomic.Int64
	atExit.Store(-1)
	goexited := exitsByGoexit(t, func() {
		defer func() { atExit.Store(joined.Load()) }()
		_ = l.RunWithCoordinator(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			defer joined.Add(1)
			if lane == 1 {
				runtime.Goexit()
			}
			<-c.Done() // released by lane 1's Goexit
			return nil
		}, nil)
		t.Error("Run returned instead of re-raising the Goexit")
	})
	if !goexited {
		t.Fatal("the caller did not Goexit")
	}
	if a := atExit.Load(); a != 2 {
		t.Fatalf("%d of 2 lanes joined when the caller left", a)
	}
	if err := l.Run(context.Background(), func(int, *poolEngine, *lanes.Control) error { return nil }); err != nil {
		t.Fatalf("Run after the Goexit: %v", err)
	}
}

func TestExecutorGoexitOutsideEnter(t *testing.T) {
	l, err := lanes.New([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	x := l.Executor()
	var dones, ran atomic.Int32
	// Start without Enter (a caller bug) runs the batch on the caller: a
	// Goexit there ends the caller, but only after Done, with the items
	// no one can run any more accounted for.
	goexited := exitsByGoexit(t, func() {
		x.Start(hataori.Batch{N: 4, Run: func(_, i int) bool {
			ran.Add(1)
			if i == 1 {
				runtime.Goexit()
			}
			return true
		}, Done: func() { dones.Add(1) }})
		t.Error("Start returned instead of passing the Goexit on")
	})
	if !goexited || dones.Load() != 1 || ran.Load() != 2 {
		t.Fatalf("goexited %v, Done called %d times (want 1), %d items ran (want 2)", goexited, dones.Load(), ran.Load())
	}
}
