package lanes_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

// bound runs fn on its own goroutine and fails the test if it has not
// returned within a generous bound: a liveness bug fails instead of hanging
// the test binary. It returns the value fn recovered from a panic, if any.
func bound(t *testing.T, fn func()) (recovered any) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		var r any
		defer func() { done <- r }()
		defer func() { r = recover() }()
		fn()
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("run did not return: lanes or coordinator were not released")
		return nil
	}
}

// waiting is a lane body that waits on the control and counts the lanes
// that returned.
func waiting(joined *atomic.Int64) func(int, *poolEngine, *lanes.Control) error {
	return func(_ int, _ *poolEngine, c *lanes.Control) error {
		defer joined.Add(1)
		<-c.Done()
		return nil
	}
}

func TestCoordinatorReturnReleasesLanes(t *testing.T) {
	l := newLanes(t)
	var joined atomic.Int64
	var err error
	if r := bound(t, func() {
		err = l.RunWithCoordinator(context.Background(), waiting(&joined), func(c *lanes.Control) error {
			return nil // no explicit Cancel: leaving cancels the control
		})
	}); r != nil {
		t.Fatalf("panic: %v", r)
	}
	if err != nil {
		t.Fatal(err)
	}
	if joined.Load() != 2 {
		t.Fatalf("%d lanes joined, want 2", joined.Load())
	}
}

func TestCoordinatorErrorReleasesLanes(t *testing.T) {
	l := newLanes(t)
	errCoord := errors.New("coordinator failed")
	var joined atomic.Int64
	var err error
	bound(t, func() {
		err = l.RunWithCoordinator(context.Background(), waiting(&joined), func(c *lanes.Control) error {
			return errCoord
		})
	})
	var ce *lanes.CoordinatorError
	if !errors.As(err, &ce) || !errors.Is(err, errCoord) {
		t.Fatalf("err = %v (%T), want *CoordinatorError wrapping errCoord", err, err)
	}
	if joined.Load() != 2 {
		t.Fatalf("%d lanes joined, want 2", joined.Load())
	}
}

func TestCoordinatorPanicReleasesLanes(t *testing.T) {
	l := newLanes(t)
	var joined atomic.Int64
	var joinedAtPanic int64 = -1
	r := bound(t, func() {
		defer func() { joinedAtPanic = joined.Load() }()
		_ = l.RunWithCoordinator(context.Background(), waiting(&joined), func(c *lanes.Control) error {
			panic("coordinator boom")
		})
	})
	pe, ok := r.(*hataori.PanicError)
	if !ok || pe.Lane != lanes.CoordinatorLane || pe.Value != "coordinator boom" || len(pe.Stack) == 0 {
		t.Fatalf("recovered %#v, want the coordinator's *PanicError", r)
	}
	if joinedAtPanic != 2 {
		t.Fatalf("%d lanes joined when the panic reached the caller, want 2", joinedAtPanic)
	}
}

func TestLaneErrorReleasesPeers(t *testing.T) {
	l := newLanes(t)
	errLane := errors.New("lane failed")
	var joined atomic.Int64
	coordReleased := false
	var err error
	bound(t, func() {
		err = l.RunWithCoordinator(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			defer joined.Add(1)
			if lane == 1 {
				return errLane
			}
			<-c.Done()
			return nil
		}, func(c *lanes.Control) error {
			<-c.Done() // released by the lane error
			coordReleased = true
			return errors.New("coordinator error loses to a lane error")
		})
	})
	var le *lanes.LaneError
	if !errors.As(err, &le) || le.Lane != 1 || !errors.Is(err, errLane) {
		t.Fatalf("err = %v (%T), want *LaneError{Lane: 1} wrapping errLane", err, err)
	}
	if joined.Load() != 2 || !coordReleased {
		t.Fatalf("joined %d lanes, coordinator released %v", joined.Load(), coordReleased)
	}
}

func TestLowestLaneErrorWins(t *testing.T) {
	l := newLanes(t)
	var err error
	bound(t, func() {
		err = l.Run(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			if lane == 1 {
				return errors.New("lane 1")
			}
			<-c.Done() // fail only after lane 1 did
			return errors.New("lane 0")
		})
	})
	var le *lanes.LaneError
	if !errors.As(err, &le) || le.Lane != 0 || le.Err.Error() != "lane 0" {
		t.Fatalf("err = %v, want lane 0's error", err)
	}
}

func TestLanePanicReleasesPeers(t *testing.T) {
	l := newLanes(t)
	var joined atomic.Int64
	var joinedAtPanic int64 = -1
	coordReleased := false
	r := bound(t, func() {
		defer func() { joinedAtPanic = joined.Load() }()
		_ = l.RunWithCoordinator(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			defer joined.Add(1)
			if lane == 0 {
				panic(errors.New("lane boom"))
			}
			<-c.Done()
			return nil
		}, func(c *lanes.Control) error {
			<-c.Done() // released by the lane panic
			coordReleased = true
			return nil
		})
	})
	pe, ok := r.(*hataori.PanicError)
	if !ok || pe.Lane != 0 || len(pe.Stack) == 0 {
		t.Fatalf("recovered %#v, want lane 0's *PanicError", r)
	}
	if err, _ := pe.Value.(error); err == nil || !errors.Is(pe, err) {
		t.Fatalf("PanicError does not unwrap to its error value: %v", pe.Value)
	}
	if joinedAtPanic != 2 || !coordReleased {
		t.Fatalf("joined %d lanes at the panic, coordinator released %v", joinedAtPanic, coordReleased)
	}
	// The lanes and their engines are usable afterwards.
	if err := l.Run(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
		_, err := e.sumSquares(10)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func TestRunWithoutCoordinatorLaneErrorReleasesPeers(t *testing.T) {
	l := newLanes(t)
	var joined atomic.Int64
	var err error
	bound(t, func() {
		err = l.Run(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			defer joined.Add(1)
			if lane == 0 {
				return errors.New("stop")
			}
			<-c.Done()
			return nil
		})
	})
	var le *lanes.LaneError
	if !errors.As(err, &le) || le.Lane != 0 || joined.Load() != 2 {
		t.Fatalf("err = %v, joined %d", err, joined.Load())
	}
}

func TestContextCancelsControl(t *testing.T) {
	l := newLanes(t)
	ctx, cancel := context.WithCancel(context.Background())
	var joined atomic.Int64
	var err error
	bound(t, func() {
		err = l.Run(ctx, func(lane int, e *poolEngine, c *lanes.Control) error {
			defer joined.Add(1)
			if lane == 1 {
				cancel()
			}
			<-c.Done()
			return nil
		})
	})
	if err != nil || joined.Load() != 2 {
		t.Fatalf("err = %v, joined %d", err, joined.Load())
	}
}

// TestSingleLaneOverlapsCoordinator shows the overlap by a handshake: the
// lane and the coordinator each wait for a message from the other, which
// completes only if they run at the same time.
func TestSingleLaneOverlapsCoordinator(t *testing.T) {
	e := newPoolEngine(0, 2)
	t.Cleanup(e.close)
	l, err := lanes.New([]*poolEngine{e})
	if err != nil {
		t.Fatal(err)
	}
	ping, pong := make(chan int), make(chan int)
	var laneTid, coordTid int
	bound(t, func() {
		err = l.RunWithCoordinator(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			laneTid = threadID()
			ping <- lane
			<-pong
			return nil
		}, func(c *lanes.Control) error {
			coordTid = threadID()
			<-ping
			pong <- 0
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if laneTid == coordTid {
		t.Fatalf("lane and coordinator share thread %d", laneTid)
	}
}

// TestLaneThreadsWithCoordinator checks lane i is lent engine i, on a thread
// distinct from the coordinator's (the caller's) and from every other lane's.
func TestLaneThreadsWithCoordinator(t *testing.T) {
	engines := twoEngines(t)
	l, err := lanes.New(engines)
	if err != nil {
		t.Fatal(err)
	}
	for run := range 3 {
		tids := make([]int, len(engines))
		lent := make([]*poolEngine, len(engines))
		var caller int
		err := l.RunWithCoordinator(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
			tids[lane], lent[lane] = threadID(), e
			_, err := e.sumSquares(100) // refuses its own pool's workers
			return err
		}, func(c *lanes.Control) error {
			caller = threadID()
			return nil
		})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for i := range engines {
			if lent[i] != engines[i] {
				t.Fatalf("run %d: lane %d lent engine %d", run, i, lent[i].id)
			}
			if tids[i] == caller {
				t.Fatalf("run %d: lane %d on the caller's thread", run, i)
			}
		}
		if tids[0] == tids[1] {
			t.Fatalf("run %d: lanes 0 and 1 share thread %d", run, tids[0])
		}
	}
}

func TestRunBusy(t *testing.T) {
	l := newLanes(t)
	var inner error
	err := l.RunWithCoordinator(context.Background(), func(int, *poolEngine, *lanes.Control) error { return nil },
		func(c *lanes.Control) error {
			inner = l.Run(context.Background(), func(int, *poolEngine, *lanes.Control) error { return nil })
			return nil
		})
	if err != nil || !errors.Is(inner, lanes.ErrBusy) {
		t.Fatalf("outer %v, inner %v; want nil, ErrBusy", err, inner)
	}
	// Released afterwards.
	if err := l.Run(context.Background(), func(int, *poolEngine, *lanes.Control) error { return nil }); err != nil {
		t.Fatal(err)
	}
}
