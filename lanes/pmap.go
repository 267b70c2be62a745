package lanes

import (
	"context"
	"errors"

	"github.com/hataori/hataori-go/hataori"
)

// errNilCallback is the item error of a PmapLanes call given a nil callback.
var errNilCallback = errors.New("lanes: PmapLanes: nil callback")

// PmapLanes is hataori.Pmap with this rank's local execution through the
// lanes of l: the same collective protocol, scheduler and wire, with the
// lanes as the rank's hataori.Executor (see Lanes.Executor). Every rank of
// comm calls it; the root passes the items (hataori.Some) and every other
// rank hataori.None. Each item runs once, on some lane of some rank (the
// root's lanes compute too), as f(item, engine) with the engine lent to that
// lane; the calling goroutine is the coordinator that makes every MPI call
// while the lanes compute, at every lane count, one included. It must be the
// MPI main thread (lock it in an init of package main).
//
// Results, ordering, error convergence (a failing item gives the same
// *hataori.PmapError on every rank) and panics (the job is aborted) are as
// for hataori.Pmap. Local mistakes stay collective, so that no rank is left
// waiting: lanes that are already running (ErrBusy) or a nil l (ErrNoEngine)
// fail this rank's executor admission inside the call, and a nil f fails
// every item it would run.
func PmapLanes[T, U, E any](ctx context.Context, comm hataori.Comm, l *Lanes[E], opts hataori.Options, rootItems hataori.Maybe[[]T], f func(item T, engine E) (U, error)) ([]U, error) {
	var exec hataori.Executor = refusingExecutor{ErrNoEngine}
	var engines []E
	if l != nil {
		exec, engines = l.Executor(), l.engines
	}
	return hataori.PmapOn(ctx, comm, exec, opts, rootItems, func(slot int, item T) (U, error) {
		if f == nil {
			var zero U
			return zero, errNilCallback
		}
		return f(item, engines[slot])
	})
}

// refusingExecutor is an executor that cannot be entered.
type refusingExecutor struct{ err error }

func (r refusingExecutor) Enter() (func(), error) { return nil, r.err }
func (refusingExecutor) Offloads() bool           { return true }
func (refusingExecutor) Start(b hataori.Batch)    { b.Done() }
func (refusingExecutor) Slots() int               { return 1 }
