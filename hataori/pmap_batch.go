package hataori

import (
	"context"
	"errors"
	"fmt"
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

// evalBatch evaluates f over items on slot, in order, writing results into
// out (a window of the result table on the root, a fresh slice elsewhere,
// so nothing is copied or serialized on the root). ctx is the callbacks'
// context, which ends once the call is stopping (under FailFast a failure
// anywhere; under either policy a context that ended or a frame that
// failed). With stopOnError (every mode under FailFast) it stops after the
// first failing item; under CollectAll it goes on past failing items. In
// either case it stops before the next item once ctx has ended, and the
// items it skipped get canceled faults with ctx's cause, like items that
// failed with the call's cancellation, so they never win the convergence:
// under CollectAll one per skipped item, in position order (each is
// listed, so no skipped item passes for a result), under FailFast the
// first only (the batch fails as a whole). The check is one non-blocking
// receive per item. It reports a panic (or runtime.Goexit) of f through
// pan instead of raising it and returns false then; the coordinator
// aborts the job.
func evalBatch[T, U any](ctx context.Context, f itemFunc[T, U], slot int, items []T, out []U, stopOnError bool, pan *firstPanic) (o batchOutcome, ok bool) {
	done := ctx.Done()
	for i := range items {
		select {
		case <-done:
			o.skip(ctx, i, len(items), stopOnError)
			return o, true
		default:
		}
		u, err, normal := callItem(ctx, f, slot, items[i], pan)
		if !normal {
			return o, false
		}
		if err != nil {
			o.faults = append(o.faults, itemFault{pos: i, err: err, canceled: isCallCanceled(ctx, err)})
			if stopOnError {
				return o, true
			}
			continue
		}
		out[i] = u
	}
	return o, true
}

// skip records positions [from, n) of a batch as skipped because ctx (the
// callbacks' context) has ended, each a canceled fault with ctx's cause;
// with one (FailFast) only the first, which stands for them all: the
// batch fails, and its other items are never looked at.
func (o *batchOutcome) skip(ctx context.Context, from, n int, one bool) {
	cause := context.Cause(ctx)
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
	wake chan struct{} // capacity one: nudges a coordinator that is waiting
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
