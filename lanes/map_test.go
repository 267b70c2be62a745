package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

func TestNewRejectsEmptyEngines(t *testing.T) {
	for _, engines := range [][]*poolEngine{nil, {}} {
		l, err := lanes.New(engines)
		if !errors.Is(err, lanes.ErrNoEngine) || l != nil {
			t.Fatalf("New(%v) = %v, %v; want nil, ErrNoEngine", engines, l, err)
		}
	}
}

func TestNewKeepsOrder(t *testing.T) {
	engines := twoEngines(t)
	l, err := lanes.New(engines)
	if err != nil {
		t.Fatal(err)
	}
	if l.Count() != len(engines) {
		t.Fatalf("Count = %d, want %d", l.Count(), len(engines))
	}
	for i, e := range l.Engines() {
		if e != engines[i] {
			t.Fatalf("Engines()[%d] is engine %d, want engine %d", i, e.id, engines[i].id)
		}
	}
}

func TestMapInLanesKnownResults(t *testing.T) {
	engines := twoEngines(t)
	l, err := lanes.New(engines)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	items := make([]int, n)
	for i := range items {
		items[i] = (i * 37) % 1000 // not monotone, so order matters
	}
	calls := make([]atomic.Int32, n)
	for run := range 2 { // the second run reuses the warm engines
		for i := range calls {
			calls[i].Store(0)
		}
		got, err := lanes.MapInLanes(context.Background(), l, items, func(x int, e *poolEngine) (int64, error) {
			calls[indexOf(items, x)].Add(1)
			return e.sumSquares(x)
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if len(got) != n {
			t.Fatalf("run %d: %d results, want %d", run, len(got), n)
		}
		for i, x := range items {
			if got[i] != closedForm(x) {
				t.Fatalf("run %d: result %d = %d, want %d", run, i, got[i], closedForm(x))
			}
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("run %d: item %d evaluated %d times", run, i, c)
			}
		}
	}
	if total := engines[0].items.Load() + engines[1].items.Load(); total != 2*n {
		t.Fatalf("engines computed %d items over two runs, want %d", total, 2*n)
	}
}

// indexOf finds x in items (items are distinct in the tests that use it).
func indexOf(items []int, x int) int {
	for i, v := range items {
		if v == x {
			return i
		}
	}
	panic(fmt.Sprintf("item %d not found", x))
}

func TestMapInLanesEmptyItems(t *testing.T) {
	l := newLanes(t)
	got, err := lanes.MapInLanes(context.Background(), l, []int{}, func(x int, e *poolEngine) (int, error) {
		return 0, errors.New("no item should be evaluated")
	})
	if err != nil || len(got) != 0 {
		t.Fatalf("MapInLanes(empty) = %v, %v", got, err)
	}
}

// TestMapInLanesThreads checks that lane i is lent engine i on a thread of
// its own: not the caller's, not another lane's, not one of the engines'
// pool workers.
func TestMapInLanesThreads(t *testing.T) {
	engines := twoEngines(t)
	l, err := lanes.New(engines)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	caller := threadID()

	var threads threadLog[*poolEngine]
	items := make([]int, 64)
	_, err = lanes.MapInLanes(context.Background(), l, items, func(_ int, e *poolEngine) (int, error) {
		threads.record(e)
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for tid, e := range threads.check(t, caller) {
		for _, pe := range engines {
			if pe.tids[tid] {
				t.Errorf("%v used on a pool worker %d of %v", e, tid, pe)
			}
		}
	}
}

func TestMapInLanesLowestFailingIndex(t *testing.T) {
	l := newLanes(t)
	const n = 200
	failing := map[int]bool{150: true, 41: true, 90: true}
	errBad := errors.New("bad item")
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	var evaluated atomic.Int64
	_, err := lanes.MapInLanes(context.Background(), l, items, func(x int, e *poolEngine) (int64, error) {
		evaluated.Add(1)
		if failing[x] {
			return 0, fmt.Errorf("item %d: %w", x, errBad)
		}
		return e.sumSquares(x)
	})
	var me *hataori.MapError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v (%T), want *hataori.MapError", err, err)
	}
	if me.Index != 41 || me.Message != "item 41: bad item" {
		t.Fatalf("MapError = {%d, %q}, want {41, \"item 41: bad item\"}", me.Index, me.Message)
	}
	if !errors.Is(err, errBad) {
		t.Fatalf("errors.Is(%v, errBad) = false", err)
	}
	if got := evaluated.Load(); got != n {
		t.Fatalf("%d items evaluated, want all %d", got, n)
	}
}

func TestMapInLanesPanicAfterJoin(t *testing.T) {
	l := newLanes(t)
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	var inFlight atomic.Int64
	var afterPanic int64 = -1
	func() {
		defer func() {
			// Recovered only after the join: no callback may be in flight.
			afterPanic = inFlight.Load()
			pe, ok := recover().(*hataori.PanicError)
			if !ok {
				t.Fatalf("recovered %T, want *hataori.PanicError", pe)
			}
			if pe.Value != "boom at 10" || len(pe.Stack) == 0 || pe.Lane < 0 || pe.Lane >= 2 {
				t.Fatalf("PanicError = {lane %d, %v, %d-byte stack}", pe.Lane, pe.Value, len(pe.Stack))
			}
		}()
		_, _ = lanes.MapInLanes(context.Background(), l, items, func(x int, e *poolEngine) (int64, error) {
			inFlight.Add(1)
			defer inFlight.Add(-1)
			if x == 10 {
				panic("boom at 10")
			}
			return e.sumSquares(x)
		})
		t.Fatal("MapInLanes returned instead of re-panicking")
	}()
	if afterPanic != 0 {
		t.Fatalf("%d callbacks still in flight when the panic reached the caller", afterPanic)
	}
	// The engines (and the lanes) are usable afterwards.
	got, err := lanes.MapInLanes(context.Background(), l, items, sumSquares)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range items {
		if got[i] != closedForm(x) {
			t.Fatalf("after panic: result %d = %d, want %d", i, got[i], closedForm(x))
		}
	}
}

func TestMapInLanesContextStopsHandingOut(t *testing.T) {
	l := newLanes(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	items := make([]int, 1000)
	for i := range items {
		items[i] = i
	}
	var started atomic.Int64
	var atCancel int64
	// Items after 20 wait for its cancel: otherwise a lane descheduled
	// between taking item 20 and running it could see the other lanes run
	// every later item first, and the call rightly succeed.
	canceled := make(chan struct{})
	_, err := lanes.MapInLanes(ctx, l, items, func(x int, e *poolEngine) (int, error) {
		started.Add(1)
		switch {
		case x == 20:
			cancel()
			atCancel = started.Load()
			close(canceled)
		case x > 20:
			select {
			case <-canceled:
			case <-time.After(10 * time.Second):
				t.Error("item 20 did not run within 10 s")
			}
		}
		return x, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
	// After the cancel, a lane stops before taking another item; only a
	// lane that had already passed its check may start one more.
	if got := started.Load(); got > atCancel+int64(l.Count()-1) {
		t.Fatalf("%d items started, %d when the context was cancelled", got, atCancel)
	}
	// A context already done starts nothing.
	_, err = lanes.MapInLanes(ctx, l, items, func(x int, e *poolEngine) (int, error) {
		t.Error("callback ran under a done context")
		return x, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
}

func TestMapInLanesBusy(t *testing.T) {
	l := newLanes(t)
	var inner atomic.Value
	_, err := lanes.MapInLanes(context.Background(), l, []int{1}, func(x int, e *poolEngine) (int, error) {
		_, err := lanes.MapInLanes(context.Background(), l, []int{2}, func(int, *poolEngine) (int, error) { return 0, nil })
		inner.Store(err)
		return x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := inner.Load().(error); !errors.Is(got, lanes.ErrBusy) {
		t.Fatalf("reentrant MapInLanes: %v, want ErrBusy", got)
	}
}

// A nil callback or lane body is hataori.ErrNilCallback, before any lane
// runs.
func TestLanesNilCallback(t *testing.T) {
	l, err := lanes.New([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lanes.MapInLanes[int, int, int](context.Background(), l, []int{1}, nil); !errors.Is(err, hataori.ErrNilCallback) {
		t.Errorf("MapInLanes(nil f) = %v, want ErrNilCallback", err)
	}
	if err := l.Run(context.Background(), nil); !errors.Is(err, hataori.ErrNilCallback) {
		t.Errorf("Run(nil body) = %v, want ErrNilCallback", err)
	}
}
