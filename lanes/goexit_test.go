package lanes_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"

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
