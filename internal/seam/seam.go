// Package seam is the execution seam between Hataori's collective calls
// and the executors that run their batches: a domain in one of its local
// modes, the MPI-only helper goroutine, and the lanes of package lanes.
//
// It is module-internal on purpose: the seed design rules out a public
// executor hierarchy, but package lanes (outside the hataori tree) must
// reach the same seam as the domains do.
//
// # The slot contract
//
// An executor offers Slots() slots: the number of batches it runs at
// once. The collective call (the coordinator) keeps every slot busy on its
// own: each slot s runs work(s), a loop owned by the call that takes a
// batch for s, evaluates it, reports it, and takes the next, until the
// call tells it to stop. An executor only decides where each slot's loop
// runs (a domain worker, a lane thread, a helper goroutine) and what an
// item may use there (the lent domain of an Inner item, lane i's engine).
//
// Run starts every slot, runs the coordinator on the calling goroutine,
// and joins: it returns only after coord and every work(s) have returned.
// The call guarantees that every work(s) returns once coord has returned,
// whatever way coord left (it closes the slots' sources on the way out).
package seam

// Executor runs the slots of one collective call at a time.
type Executor interface {
	// Slots is the number of batches the executor runs at once (>= 1).
	Slots() int

	// Threads is the number of goroutines that may compute at once while
	// the call runs (a domain's workers for Inner, which runs one slot but
	// lends the whole domain to it); the call keeps GOMAXPROCS above it so
	// that the coordinator never waits for a processor.
	Threads() int

	// Offloads reports whether slots run off the calling goroutine. When
	// false (MPI-only at MPI_THREAD_SINGLE), Run starts no slot and the
	// coordinator evaluates slot 0's batches itself, between messages.
	Offloads() bool

	// Run claims the executor for one call without blocking and fails
	// (for example with hataori.ErrDomainBusy or lanes.ErrBusy), calling
	// nothing, when it cannot. Otherwise it starts work(s) for every slot
	// s in [0, Slots()) on that slot's goroutine (none when !Offloads()),
	// calls coord on the calling goroutine, waits for every work(s) to
	// return, releases the claim, and returns nil. work never panics: the
	// call recovers every callback inside it.
	Run(work func(slot int), coord func()) error
}

// Carrier is set by package hataori: it returns a *hataori.Domain that
// carries exec and the slot-aware callback fn (of type
// func(ctx context.Context, slot int, item T) (U, error), ctx being the
// call's context) into hataori.Pmap[T, U], which then runs over exec and
// calls fn. Package lanes uses it for PmapLanes; such a domain
// is never handed to users.
var Carrier func(exec Executor, fn any) any

// MapError is set by package hataori: it returns the *hataori.MapError of
// item i failing with err.
var MapError func(i int, err error) error

// CapturePanic is set by package hataori: called from the deferred function
// that recovered r (nil for runtime.Goexit), it returns the
// *hataori.PanicError of lane, with the stack of the panic site.
var CapturePanic func(lane int, r any) any

// Repanic is set by package hataori: it re-raises a *hataori.PanicError on
// the calling goroutine (a Goexit as a Goexit).
var Repanic func(p any)
