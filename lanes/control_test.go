package lanes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hataori/hataori-go/lanes"
)

type ctxKey struct{}

// TestControlIsContext: a lane's Control is a context.Context that carries
// the run's context's values and deadline, is not done while the run goes
// on, and ends with context.Canceled when a lane cancels it, or with the
// run's context's error when that context ends.
func TestControlIsContext(t *testing.T) {
	l, err := lanes.New([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	dl := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxKey{}, "v"), dl)
	defer cancel()
	err = l.Run(ctx, func(lane int, _ int, c *lanes.Control) error {
		var cc context.Context = c
		if cc.Value(ctxKey{}) != "v" {
			t.Errorf("lane %d: Value = %v", lane, cc.Value(ctxKey{}))
		}
		if d, ok := cc.Deadline(); !ok || !d.Equal(dl) {
			t.Errorf("lane %d: Deadline = %v, %v", lane, d, ok)
		}
		if lane == 0 {
			if cc.Err() != nil {
				t.Errorf("lane 0: Err = %v before any cancel", cc.Err())
			}
			c.Cancel()
		}
		<-cc.Done()
		if !errors.Is(cc.Err(), context.Canceled) || !c.Canceled() {
			t.Errorf("lane %d: Err = %v after Cancel", lane, cc.Err())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	ctx2, cancel2 := context.WithCancelCause(context.Background())
	want := errors.New("stop")
	err = l.Run(ctx2, func(lane int, _ int, c *lanes.Control) error {
		if lane == 0 {
			cancel2(want)
		}
		<-c.Done()
		if c.Err() != context.Canceled || context.Cause(ctx2) != want {
			t.Errorf("lane %d: Err = %v after the run's context ended", lane, c.Err())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
