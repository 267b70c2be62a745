package hataori

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// Map applies f to every item, one after another on the calling goroutine,
// and returns the results in input order.
//
// It stops at the first error and returns a *[MapError] carrying that item's
// index and the error's bounded message; the callback's error stays
// reachable with errors.Is and errors.As. When ctx ends, Map starts no
// further item and returns an error wrapping ctx.Err(). A panic in f is
// re-raised on the caller as a *[PanicError] holding the original value and
// stack.
//
// Map has no concurrency: f needs no synchronisation.
//
// Nil arguments follow one policy across Hataori's calls: a nil ctx means
// context.Background(), and a nil f fails with [ErrNilCallback] before any
// item runs (in a collective call, on every rank).
func Map[T, U any](ctx context.Context, items []T, f func(T) (U, error)) ([]U, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if f == nil {
		return nil, ErrNilCallback
	}
	if err := ctx.Err(); err != nil {
		return nil, canceledError("Map", err)
	}
	out := make([]U, len(items))
	done := ctx.Done()
	normal := false
	defer func() {
		if !normal {
			// A nil recover means runtime.Goexit: let it carry on.
			if r := recover(); r != nil {
				panic(capturePanic(r))
			}
		}
	}()
	for i := range items {
		if done != nil {
			select {
			case <-done:
				normal = true
				return nil, canceledError("Map", ctx.Err())
			default:
			}
		}
		u, err := f(items[i])
		if err != nil {
			normal = true
			return nil, newMapError(i, err)
		}
		out[i] = u
	}
	normal = true
	return out, nil
}

// canceledError wraps a context's error for the local calls.
func canceledError(op string, err error) error {
	return fmt.Errorf("hataori: %s stopped: %w", op, err)
}

// MapIn applies f to every item on the workers of domain d, as mode says,
// and returns the results in input order.
//
//   - [Auto] (the zero value): Outer.
//   - Sequential: the items run one after another on one worker; MapIn stops
//     after the first failing item.
//   - Outer: every item runs exactly once, spread over all workers; every
//     item is evaluated and the lowest failing index is reported.
//   - Inner: the items run one after another on the calling goroutine, each
//     lent the whole domain: f reaches the workers through d.Parallel, and
//     nothing else may use them meanwhile. MapIn stops after the first
//     failing item.
//
// Before any callback MapIn checks, in this order: a valid mode
// ([ErrInvalidMode]), a non-nil callback ([ErrNilCallback]; a nil ctx means
// context.Background()), a domain made by [NewDomain] ([ErrNoDomain] for nil
// or a zero [Domain]), an open domain
// ([ErrDomainClosed]), a caller that is not a worker of any domain
// ([ErrWorkerEntry]), and admission, which never blocks ([ErrDomainBusy] when
// another operation holds d). Admission is released on return, whether
// MapIn succeeds, fails or panics.
//
// A failing callback gives a *[MapError] (see [Map]). When ctx ends, no
// further item starts, running items finish, and MapIn returns an error
// wrapping ctx.Err() (this takes precedence over callback errors, as some
// items were never evaluated). A panicking callback makes MapIn stop
// handing out items, wait for every worker to finish its item, release the
// domain (which stays usable), and re-panic on the caller with a
// *[PanicError] holding the original value and stack.
//
// f runs concurrently with itself in [Outer] mode (and so with [Auto]) and
// must be safe for that.
func MapIn[T, U any](ctx context.Context, d *Domain, mode LocalMode, items []T, f func(T) (U, error)) ([]U, error) {
	if !mode.valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidMode, int(mode))
	}
	mode = mode.resolve(true)
	if f == nil {
		return nil, ErrNilCallback
	}
	if ctx == nil {
		ctx = context.Background()
	}
	release, err := d.admit()
	if err != nil {
		return nil, err
	}
	defer release()
	if err := ctx.Err(); err != nil {
		return nil, canceledError("MapIn", err)
	}
	s := &mapState[T, U]{items: items, out: make([]U, len(items)), f: f, done: ctx.Done(), stopOnError: mode != Outer}
	done := make(chan struct{})
	s.task = newIndexTask(len(items), nil, func() { close(done) })
	s.task.loop = s.loop
	d.launch(s.task, mode, true)
	<-done
	if s.task.panic != nil {
		repanic(s.task.panic)
	}
	if s.canceled.Load() {
		return nil, canceledError("MapIn", ctx.Err())
	}
	if s.err != nil {
		return nil, newMapError(s.errIndex, s.err)
	}
	return s.out, nil
}

// mapState is one MapIn call: its items, results, and the outcome shared by
// the workers.
type mapState[T, U any] struct {
	items       []T
	out         []U
	f           func(T) (U, error)
	done        <-chan struct{}
	stopOnError bool
	task        *indexTask
	canceled    atomic.Bool // an item was skipped because ctx ended

	mu       sync.Mutex
	err      error // the lowest failing index's error
	errIndex int
}

// loop takes and evaluates items until none is left or the task stops.
func (s *mapState[T, U]) loop(int) {
	t := s.task
	for !t.stop.Load() {
		i := t.next.Add(1) - 1
		if i >= t.n {
			return
		}
		if s.done != nil && s.cancelled() {
			return
		}
		u, err := s.f(s.items[i])
		if err != nil {
			s.failed(int(i), err)
			continue
		}
		s.out[i] = u
	}
}

// cancelled reports (and records) that ctx has ended.
func (s *mapState[T, U]) cancelled() bool {
	select {
	case <-s.done:
		s.canceled.Store(true)
		s.task.stop.Store(true)
		return true
	default:
		return false
	}
}

// failed records the error of item i: the lowest index wins.
func (s *mapState[T, U]) failed(i int, err error) {
	s.mu.Lock()
	if s.err == nil || i < s.errIndex {
		s.err, s.errIndex = err, i
	}
	s.mu.Unlock()
	if s.stopOnError {
		s.task.stop.Store(true)
	}
}

// LocalMode selects how the items of [MapIn], or of a [Pmap] call on a
// domain, meet the workers of a [Domain]. The zero value is [Auto]: every
// worker with a domain, one goroutine without.
type LocalMode int

const (
	// Auto, the zero value, uses every worker: it means [Outer] wherever
	// there is a domain (MapIn, and Pmap with a non-nil domain) and
	// [Sequential] for an MPI-only Pmap (nil domain), whose one helper
	// goroutine is its only slot. Each rank resolves it for itself, after
	// the ranks agreed on the options as passed, so ranks with and without
	// a domain may all pass Auto.
	Auto LocalMode = iota
	// Sequential runs the items one after another on one worker of the
	// domain, with no fan-out, and stops after the first failing item.
	Sequential
	// Outer evaluates every item exactly once, spread over all the
	// domain's workers, keeps the input order in the results and, in
	// MapIn, reports the lowest failing index after every item has been
	// evaluated (a Pmap batch, whose items one worker runs in order, stops
	// as [FailFast] says). An item must not start competing parallel work
	// of its own.
	Outer
	// Inner runs the items one after another, lending the whole domain to
	// each: the callback reaches the domain's workers through
	// Domain.Parallel, and nothing else may use them meanwhile. It stops
	// after the first failing item.
	Inner
)

// String returns the mode's name ("Auto", "Sequential", "Outer" or "Inner").
func (m LocalMode) String() string {
	switch m {
	case Auto:
		return "Auto"
	case Sequential:
		return "Sequential"
	case Outer:
		return "Outer"
	case Inner:
		return "Inner"
	}
	return "LocalMode(" + strconv.Itoa(int(m)) + ")"
}

func (m LocalMode) valid() bool { return m >= Auto && m <= Inner }

// resolve returns the mode that runs: Auto becomes Outer with a domain and
// Sequential without one (an MPI-only Pmap); every other mode, invalid
// ones included, is returned unchanged.
func (m LocalMode) resolve(domain bool) LocalMode {
	switch {
	case m != Auto:
		return m
	case domain:
		return Outer
	}
	return Sequential
}
