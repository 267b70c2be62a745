package lanes

import (
	"context"
	"fmt"
	"runtime"

	"github.com/hataori/hataori-go/hataori"
)

// Run lends engine i to body(i, engine, c) on lane i, one goroutine per lane,
// each locked to an OS thread of its own, and returns once every lane body
// has returned. Lanes are joined in index order.
//
// A lane body that returns an error or panics cancels the Control, so peers
// waiting on c.Done() are released; the run's context being done cancels it
// too. The outcome is, in this order of precedence: a panic of the lowest
// panicking lane, re-panicked on the caller as a *[hataori.PanicError] after every lane
// was joined; a *[LaneError] for the lowest failing lane; nil.
//
// Run fails with [ErrBusy] when the lanes are already running, and with the
// context's error (wrapped) when ctx is done before the lanes start.
func (l *Lanes[E]) Run(ctx context.Context, body func(lane int, engine E, c *Control) error) error {
	return l.run(ctx, body, nil)
}

// RunWithCoordinator is Run with a coordinator: coord runs on the calling
// goroutine while the lanes run, at every lane count (one included), and
// shares the lanes' Control. When the coordinator leaves, by returning, by
// error or by panic, the Control is cancelled before the lanes are joined,
// so lanes waiting on c.Done() are released without an explicit Cancel. A
// coordinator waiting on the Control itself is released by a lane error, a
// lane panic or an explicit Cancel.
//
// The outcome is, in this order of precedence: a lane panic (lowest lane),
// then a coordinator panic, each re-panicked on the caller as a *[hataori.PanicError]
// after every lane was joined; a *[LaneError] for the lowest failing lane; a
// *[CoordinatorError] when the coordinator failed while every lane ended
// cleanly; nil.
func (l *Lanes[E]) RunWithCoordinator(ctx context.Context, body func(lane int, engine E, c *Control) error, coord func(c *Control) error) error {
	if coord == nil {
		return l.run(ctx, body, func(*Control) error { return nil })
	}
	return l.run(ctx, body, coord)
}

// laneOutcome is what one lane (or the coordinator) left behind.
type laneOutcome struct {
	err   error
	panic *hataori.PanicError
}

func (l *Lanes[E]) run(ctx context.Context, body func(int, E, *Control) error, coord func(*Control) error) error {
	if body == nil {
		return fmt.Errorf("Lanes.Run: nil lane body: %w", hataori.ErrNilCallback)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := l.acquire(); err != nil {
		return err
	}
	defer l.releaseBusy()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lanes: run not started: %w", err)
	}

	// Keep the caller on its thread for the run, so that no lane can be
	// scheduled onto it while the caller waits (the lock is counted: a
	// caller that is already locked stays locked afterwards).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	c := newControl(ctx)
	stop := context.AfterFunc(ctx, c.Cancel)
	defer stop()

	n := len(l.engines)
	outcomes := make([]laneOutcome, n)
	done := make([]chan struct{}, n)
	for i := range n {
		done[i] = make(chan struct{})
		go runLane(i, l.engines[i], body, c, &outcomes[i], done[i])
	}

	// A coordinator that calls runtime.Goexit (testing.T.FailNow) ends the
	// caller's goroutine here: join the lanes all the same (their Control
	// is cancelled by then) before they are released.
	joined := false
	defer func() {
		if !joined {
			for i := range n {
				<-done[i]
			}
		}
	}()
	var co laneOutcome
	if coord != nil {
		co = runCoordinator(coord, c)
	}
	for i := range n {
		<-done[i]
	}
	joined = true
	c.Cancel()

	for i := range outcomes {
		if p := outcomes[i].panic; p != nil {
			raise(p)
		}
	}
	if co.panic != nil {
		raise(co.panic)
	}
	for i := range outcomes {
		if err := outcomes[i].err; err != nil {
			return &LaneError{Lane: i, Err: err}
		}
	}
	if co.err != nil {
		return &CoordinatorError{Err: co.err}
	}
	return nil
}

// runLane is the goroutine of lane i. It locks itself to its OS thread and
// never unlocks, so the runtime ends that thread with the lane: a lane
// thread never comes from, nor returns to, the pool another goroutine (a
// domain worker, the caller) runs on.
func runLane[E any](i int, engine E, body func(int, E, *Control) error, c *Control, out *laneOutcome, done chan<- struct{}) {
	runtime.LockOSThread()
	defer close(done)
	normal := false
	defer func() {
		if !normal {
			out.panic = capturePanic(i, recover())
			c.Cancel()
		}
	}()
	err := body(i, engine, c)
	normal = true
	if err != nil {
		out.err = err
		c.Cancel()
	}
}

// runCoordinator runs coord on the calling goroutine and cancels the control
// when it leaves, however it leaves.
func runCoordinator(coord func(*Control) error, c *Control) (out laneOutcome) {
	defer c.Cancel()
	normal := false
	defer func() {
		if !normal {
			out.panic = capturePanic(CoordinatorLane, recover())
		}
	}()
	out.err = coord(c)
	normal = true
	return out
}
