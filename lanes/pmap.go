package lanes

import (
	"context"
	"iter"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/internal/seam"
)

// PmapLanes is [hataori.Pmap] with this rank's local execution on the lanes
// of l: the same collective protocol, scheduler and wire, with one slot per
// lane. Every rank of comm calls it; the root passes the items
// ([hataori.Some]) and every other rank [hataori.None]. Each item runs once, on
// some lane of some rank (the root's lanes compute too), as f(item, engine)
// with the engine lent to that lane; every lane of every rank runs a batch
// at once, and a lane runs its batch's items in order, all of them. The
// calling goroutine is the coordinator that makes every MPI call while the
// lanes compute, at every lane count, one included. It must be the MPI
// main thread (the goroutine that initialised MPI; [hataori.InitThread]
// locks it to its thread when it does).
//
// Results, ordering, error convergence (a failing item gives the same
// *[hataori.PmapError] on every rank) and panics (the job is aborted) are as
// for [hataori.Pmap]; opts.Mode is only checked for validity. Local mistakes
// stay collective, so that no rank is left waiting: lanes that are already
// running ([ErrBusy]) or a nil l ([ErrNoEngine]) fail this rank's admission
// inside the call's preflight, and so does a nil f ([hataori.ErrNilCallback]).
func PmapLanes[T, U, E any](ctx context.Context, comm hataori.Comm, l *Lanes[E], opts hataori.Options, rootItems hataori.Maybe[[]T], f func(item T, engine E) (U, error)) ([]U, error) {
	var g func(context.Context, T, E) (U, error)
	if f != nil {
		g = func(_ context.Context, item T, engine E) (U, error) { return f(item, engine) }
	}
	return PmapLanesContext(ctx, comm, l, opts, rootItems, g)
}

// PmapLanesContext is PmapLanes whose callback also receives the call's
// context, as for [hataori.PmapContext]: a child of ctx that is cancelled on
// every rank once the call is stopping (an item failed somewhere under
// [hataori.FailFast], some rank's context ended, a frame failed), with
// context.Cause [hataori.ErrStopped] there.
func PmapLanesContext[T, U, E any](ctx context.Context, comm hataori.Comm, l *Lanes[E], opts hataori.Options, rootItems hataori.Maybe[[]T], f func(ctx context.Context, item T, engine E) (U, error)) ([]U, error) {
	return hataori.Pmap(ctx, comm, carrier(l, f), opts, rootItems, func(T) (U, error) {
		panic("lanes: internal error: the carrier's own callback runs instead")
	})
}

// PmapLanesStream is [hataori.PmapStream] with this rank's local execution
// on the lanes of l, as PmapLanesContext is PmapContext: the root reads
// its items lazily from its sequence and hands each result to sink (on
// the root only; nil elsewhere) in input order, or in completion order
// with opts.Unordered, holding at most opts.Window items and results.
func PmapLanesStream[T, U, E any](ctx context.Context, comm hataori.Comm, l *Lanes[E], opts hataori.Options, rootItems hataori.Maybe[iter.Seq[T]], f func(ctx context.Context, item T, engine E) (U, error), sink func(i int, u U) error) error {
	return hataori.PmapStream(ctx, comm, carrier(l, f), opts, rootItems, func(context.Context, T) (U, error) {
		panic("lanes: internal error: the carrier's own callback runs instead")
	}, sink)
}

// carrier is the domain that carries l's executor and f (with the lane's
// engine) into a hataori call.
func carrier[T, U, E any](l *Lanes[E], f func(ctx context.Context, item T, engine E) (U, error)) *hataori.Domain {
	var exec seam.Executor = refusingExec{ErrNoEngine}
	var engines []E
	if l != nil {
		exec, engines = laneExec[E]{l}, l.engines
	}
	var fn any // nil: refused in the preflight with hataori.ErrNilCallback
	if f != nil {
		fn = func(ctx context.Context, s int, item T) (U, error) { return f(ctx, item, engines[s]) }
	}
	return seam.Carrier(exec, fn).(*hataori.Domain)
}
