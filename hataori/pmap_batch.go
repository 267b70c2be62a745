package hataori

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"

	"github.com/hataori/hataori-go/hataori/internal/coll"
)

// itemFunc is a Pmap callback as the call runs it: with the call's
// context and the slot it runs on (lanes lend slot s's engine).
type itemFunc[T, U any] func(ctx context.Context, slot int, item T) (U, error)

// itemFault is one failing item of a batch as evalBatch leaves it on the
// rank that ran it: its position in the batch and the callback's error.
type itemFault struct {
	pos int   // position in the batch
	err error // the callback's error
	// canceled: the item failed with the call's own cancellation (its
	// context had ended, and the error is context.Canceled,
	// context.DeadlineExceeded or ErrStopped): a consequence of the
	// failure that stopped the call, not a failure of its own, so it
	// never wins the convergence over that failure.
	canceled bool
}

// batchOutcome is what evaluating one batch on a slot left behind.
type batchOutcome struct {
	faults  []itemFault // in position order; nil when every item succeeded
	skipped int         // the last items, not run because the call was stopping (see skip)
}

// first returns the lowest failing item that is not a mere consequence of
// the call stopping, else the lowest canceled one, else nil.
func (o *batchOutcome) first() *itemFault {
	for i := range o.faults {
		if !o.faults[i].canceled {
			return &o.faults[i]
		}
	}
	if len(o.faults) > 0 {
		return &o.faults[0]
	}
	return nil
}

// isCallCanceled reports whether err is the call's own cancellation showing
// through a callback (see itemFault.canceled).
func isCallCanceled(ctx context.Context, err error) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrStopped))
}

// Stopping a running batch (evalBatch): a batch stops before its next
// item once the call is stopping, as far as that item can still matter.
// Under FailFast the error is that of the lowest failing index, so an item
// above the lowest failing index known on this rank can no longer change
// it, while one below could still be a lower failure, which must win: a
// batch (its items in increasing index order) stops before its first item
// above that index and runs the others, so the error is exactly the one
// every dealt batch running to its end would give, whenever each failure
// became known. Under either policy a call-level stop (a context that
// ended, a failure no index names) stops every batch before its next item.

// noFailure and haltAll are the values of a failIndex beside an index:
// no failure known yet, and a call-level stop (every item is above it).
const (
	noFailure int64 = math.MaxInt64
	haltAll   int64 = -1
)

// failIndex is the lowest failing index a rank knows in one call (FailFast),
// haltAll after a call-level stop, noFailure before any: every running
// batch of the rank reads it before each item (one atomic load), and it
// only ever decreases. On the root it is lowered by the root's slots (their
// own failures), and by the coordinator (a remote rank's failure, from its
// RESULT; a call-level stop); on another rank by its slots and by the
// root's CANCEL, which carries the root's value.
type failIndex struct{ v atomic.Int64 }

func newFailIndex() *failIndex {
	x := &failIndex{}
	x.v.Store(noFailure)
	return x
}

// load returns the current value.
func (x *failIndex) load() int64 { return x.v.Load() }

// lower sets the value to i when i is lower, and reports whether it did.
func (x *failIndex) lower(i int64) bool {
	for {
		cur := x.v.Load()
		if i >= cur {
			return false
		}
		if x.v.CompareAndSwap(cur, i) {
			return true
		}
	}
}

// stopRule is how the running batches of one call stop on one rank (see
// evalBatch); it is built once per call (call.stopRule).
type stopRule struct {
	// onError (FailFast): a batch stops after its first failing item,
	// lowers low to that item's index, and stops before its first item
	// above low.
	onError bool
	// halt, once closed, stops every running batch before its next item:
	// under FailFast the caller's context (its end is a call-level stop
	// that needs no coordinator to become visible; the others come
	// through low), under CollectAll the callbacks' context (failing
	// items do not stop a CollectAll call, only call-level stops do, and
	// each cancels it).
	halt <-chan struct{}
	// low is the rank's lowest failing index known (nil: not consulted,
	// CollectAll).
	low *failIndex
	// look, if set, runs before every item, before low and halt are
	// consulted: a batch that a rank's coordinator runs itself reads the
	// root's frames there (remoteLoop.betweenItems), so that a CANCEL
	// it reads stops the batch before the next item.
	look func()
}

// evalBatch evaluates f over items on slot, in order, writing results into
// out (a window of the result table on the root, a fresh slice elsewhere,
// so nothing is copied or serialized on the root). items[p] is the input
// item of index first+p. ctx is the callbacks' context, which ends once
// the call is stopping (under FailFast a failure anywhere; under either
// policy a context that ended or a frame that failed); rule says when the
// batch stops early:
//   - with rule.onError (every mode under FailFast) it stops after its first
//     failing item, lowering rule.low to that item's index unless the item
//     failed with the call's cancellation, and before its first item whose
//     index is above rule.low (so every running batch stops before its next
//     item above the lowest failing index known, while the items below it,
//     one of which could still be a lower failure, run: the error is that
//     of the lowest failing index, as if every dealt batch had run);
//   - under CollectAll (no onError) it goes on past failing items;
//   - in either case it stops before its next item once rule.halt is
//     closed (a call-level stop).
//
// The items it skipped get canceled faults with ctx's cause (ErrStopped
// before ctx has ended), like items that failed with the call's
// cancellation, so they never win the convergence: under CollectAll one
// per skipped item, in position order (each is listed, so no skipped item
// passes for a result), under FailFast the first only (the batch fails as
// a whole). The checks are one atomic load and one non-blocking receive
// per item. It reports a panic (or runtime.Goexit) of f through pan
// instead of raising it and returns false then; the coordinator aborts
// the job.
func evalBatch[T, U any](ctx context.Context, f itemFunc[T, U], slot int, first int64, items []T, out []U, rule stopRule, pan *firstPanic) (o batchOutcome, ok bool) {
	for i := range items {
		if rule.look != nil {
			rule.look()
		}
		if rule.low != nil && first+int64(i) > rule.low.load() {
			o.skip(ctx, i, len(items), rule.onError)
			return o, true
		}
		select {
		case <-rule.halt:
			o.skip(ctx, i, len(items), rule.onError)
			return o, true
		default:
		}
		u, err, normal := callItem(ctx, f, slot, items[i], pan)
		if !normal {
			return o, false
		}
		if err != nil {
			canceled := isCallCanceled(ctx, err)
			o.faults = append(o.faults, itemFault{pos: i, err: err, canceled: canceled})
			if rule.onError {
				if !canceled && rule.low != nil {
					rule.low.lower(first + int64(i))
				}
				return o, true
			}
			continue
		}
		out[i] = u
	}
	return o, true
}

// skip records positions [from, n) of a batch as skipped because the call
// is stopping, each a canceled fault with ctx's cause (ErrStopped while ctx
// has not ended yet: a batch may stop on the failing index before the
// coordinator cancels ctx); with one (FailFast) only the first, which
// stands for them all: the batch fails, and its other items are never
// looked at.
func (o *batchOutcome) skip(ctx context.Context, from, n int, one bool) {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ErrStopped
	}
	o.skipped = n - from
	if one {
		n = from + 1
	}
	o.faults = slices.Grow(o.faults, n-from)
	for p := from; p < n; p++ {
		o.faults = append(o.faults, itemFault{pos: p, err: cause, canceled: true})
	}
}

// callItem calls f once; a panic or Goexit is recorded in pan and reported
// as normal == false. A Goexit cannot be stopped: the slot's goroutine ends
// after the record, and the coordinator aborts the job.
func callItem[T, U any](ctx context.Context, f itemFunc[T, U], slot int, item T, pan *firstPanic) (u U, err error, normal bool) {
	defer func() {
		if !normal {
			pan.record(capturePanic(recover()))
		}
	}()
	u, err = f(ctx, slot, item)
	return u, err, true
}

// firstPanic holds the first panic raised by user code on any slot of one
// call, for the coordinator, which alone may call MPI_Abort.
type firstPanic struct {
	p    atomic.Pointer[PanicError]
	wake chan struct{}             // capacity one: nudges a coordinator that is waiting
	bell atomic.Pointer[coll.Bell] // the root's bell, rung by nudge (pmap_bell.go; nil: none)
}

func newFirstPanic() *firstPanic { return &firstPanic{wake: make(chan struct{}, 1)} }

func (s *firstPanic) record(p *PanicError) {
	if s.p.CompareAndSwap(nil, p) {
		s.nudge()
	}
}

// nudge wakes a waiting coordinator without blocking.
func (s *firstPanic) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if b := s.bell.Load(); b != nil {
		b.Ring()
	}
}

// check aborts the job with ExitPanic, printing the panic value and stack
// first, when a slot recorded a panic; it returns otherwise. It runs on
// the coordinator.
func (s *firstPanic) check(k *coll.Coll) {
	if p := s.p.Load(); p != nil {
		fmt.Fprintf(os.Stderr, "hataori: Pmap callback panicked: %v\n\n%s\n", p.Value, p.Stack)
		coll.AbortJob(ExitPanic, "callback panic in Pmap")
	}
}

// PanicError is the one value every local call re-panics with, on the
// calling goroutine, when a callback panicked: [Map], [MapIn], Domain.Parallel,
// and package lanes (Run, RunWithCoordinator, MapInLanes). Value is the
// callback's original panic value and Stack the stack of the goroutine
// that panicked, taken where it panicked. The re-panic comes only after
// every worker or lane has finished, and the domain or the engines stay
// usable. (In a collective call a panic cannot be re-raised on every rank:
// it aborts the job with [ExitPanic] instead.)
//
// Recover it with
//
//	if pe, ok := recover().(*hataori.PanicError); ok { … pe.Value … }
type PanicError struct {
	// Value is the value the callback passed to panic.
	Value any
	// Stack is the panicking goroutine's stack (runtime/debug.Stack).
	Stack []byte
	// Lane is set by package lanes: the index of the lane whose body
	// panicked, or lanes.CoordinatorLane (-1) for the coordinator. It is 0
	// for the other calls.
	Lane int

	goexit bool // the callback called runtime.Goexit instead of panicking
}

// Error returns the original value and the stack where it panicked.
func (p *PanicError) Error() string {
	return fmt.Sprintf("hataori: callback panicked: %v\n\noriginal stack:\n%s", p.Value, p.Stack)
}

// Unwrap returns Value when it is an error, so errors.Is and errors.As
// reach a panicked error.
func (p *PanicError) Unwrap() error {
	if err, ok := p.Value.(error); ok {
		return err
	}
	return nil
}

// capturePanic turns a recovered value into a *PanicError; call it from the
// deferred function that recovered, so the stack still shows the panic
// site. A recovered *PanicError (a nested call re-panicking) is kept as is.
// r == nil means the goroutine is exiting through runtime.Goexit.
func capturePanic(r any) *PanicError {
	if pe, ok := r.(*PanicError); ok {
		return pe
	}
	if r == nil {
		return &PanicError{Value: "runtime.Goexit called in a callback", Stack: debug.Stack(), goexit: true}
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// repanic re-raises a captured panic on the calling goroutine: a callback
// that called runtime.Goexit (for example through testing.T.FailNow) makes
// the caller exit the same way; any other panic re-panics with p.
func repanic(p *PanicError) {
	if p.goexit {
		runtime.Goexit()
	}
	panic(p)
}
