package lanes

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/internal/seam"
)

// MapInLanes evaluates f(item, engine) for every item exactly once on the
// lanes of l and returns the results in input order. Items are handed out
// from a shared next index, so a lane that finishes early takes the next
// item; which lane (and engine) evaluates which item is not fixed, but lane
// i is always lent engine i.
//
// A failing callback does not stop the run: every item is evaluated, and the
// error reports the lowest failing index as a *[hataori.MapError] whose Unwrap
// returns the callback's error. When ctx ends, no further item is handed out
// and [MapInLanes] returns an error wrapping ctx.Err() (unless every item had
// already been handed out). A panic in f cancels the run (no further item is
// handed out) and is re-panicked on the caller as a *[hataori.PanicError] once every
// lane has been joined; the engines stay the caller's and usable.
//
// It fails with [ErrBusy] when l is already running.
func MapInLanes[T, U, E any](ctx context.Context, l *Lanes[E], items []T, f func(item T, engine E) (U, error)) ([]U, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if f == nil {
		return nil, fmt.Errorf("MapInLanes: %w", hataori.ErrNilCallback)
	}
	n := len(items)
	out := make([]U, n)
	errs := make([]error, n)
	var next atomic.Int64
	body := func(_ int, engine E, c *Control) error {
		for !c.Canceled() && ctx.Err() == nil {
			i := int(next.Add(1) - 1)
			if i >= n {
				return nil
			}
			out[i], errs[i] = f(items[i], engine)
		}
		return nil
	}
	if err := l.Run(ctx, body); err != nil {
		return nil, err
	}
	if handed := int(next.Load()); handed < n {
		return nil, fmt.Errorf("lanes: MapInLanes stopped after %d of %d items: %w", handed, n, ctx.Err())
	}
	for i, err := range errs {
		if err != nil {
			return nil, seam.MapError(i, err)
		}
	}
	return out, nil
}
