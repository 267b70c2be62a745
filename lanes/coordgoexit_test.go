package lanes_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/lanes"
)

// A coordinator that calls runtime.Goexit (testing.T.FailNow) ends the
// caller's goroutine; every lane must still be joined before the caller
// leaves and the lanes are released for another run.
func TestCoordinatorGoexitJoinsLanes(t *testing.T) {
	l := newLanes(t)
	var finished atomic.Int32
	atExit := int32(-1)
	goexited := exitsByGoexit(t, func() {
		defer func() { atExit = finished.Load() }()
		_ = l.RunWithCoordinator(context.Background(), func(_ int, _ *poolEngine, c *lanes.Control) error {
			<-c.Done()
			// Make a missing join visible: the lane is still busy for a
			// while after the control is cancelled.
			time.Sleep(50 * time.Millisecond)
			finished.Add(1)
			return nil
		}, func(*lanes.Control) error {
			runtime.Goexit()
			return nil
		})
	})
	if !goexited {
		t.Fatal("the caller did not leave through runtime.Goexit")
	}
	if want := int32(l.Count()); atExit != want {
		t.Fatalf("%d of %d lanes joined when the caller left", atExit, want)
	}
	if err := l.Run(context.Background(), func(int, *poolEngine, *lanes.Control) error { return nil }); err != nil {
		t.Fatalf("run after a coordinator Goexit: %v", err)
	}
}
