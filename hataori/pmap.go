package hataori

import (
	"context"
	"errors"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/internal/sched"
	"github.com/hataori/hataori-go/internal/slot"
)

// Options configures one Pmap call. Every rank must pass identical
// options; the collective preflight checks it.
type Options struct {
	// Root is the rank that supplies the items and receives the results.
	Root int
	// BatchSize is the number of consecutive items handed out at once;
	// 0 means 1, a negative value is rejected by the preflight.
	BatchSize int
	// Mode is the local mode of the domain passed to Pmap. An MPI-only
	// call (nil domain) needs Sequential.
	Mode LocalMode
	// Stats, when not nil on the root, receives where the call's work
	// went once it has succeeded. It is local: other ranks' Stats are
	// left alone, and it takes no part in the agreement of the options.
	Stats *CallStats
	// Prefetch enables bounded prefetch (off by default): each non-root
	// rank holds at most one batch beyond the ones its slots run, received
	// while they compute, so that a slot that finishes a batch starts the
	// next one without waiting for a READY/TASK round trip. The root never
	// prefetches (its slots take their batches directly). Memory: at most
	// slots+1 batches of items and results per rank. It applies to MPI-only
	// ranks too (their callbacks run off the coordinator), but not at
	// MPI_THREAD_SINGLE, where the coordinator runs them itself.
	Prefetch bool
}

// Pmap applies f to every item of the root's input, dealing batches out
// dynamically to whichever rank is free, the root included, and returns
// the results in input order on the root (a non-nil slice, empty for an
// empty input) and nil elsewhere.
//
// Pmap is collective: every rank of comm calls it, in the same order
// relative to the other collective calls, with identical opts; only
// opts.Root passes Some(items), every other rank None. It must run on the
// MPI main thread: a program calls runtime.LockOSThread in an init
// function of package main and calls Pmap from the main goroutine.
//
// Every rank offers slots, and every slot is kept busy: with a domain d in
// Outer mode one slot per worker (W batches run at once, each worker
// running its batch's items in order), in Sequential or Inner mode one (an
// Inner item is lent the whole domain); MPI-only (d nil, opts.Mode
// Sequential) one, on a helper goroutine. The calling goroutine is the
// coordinator: it makes every MPI call and never runs a callback, so it
// answers the other ranks while the rank's own slots compute (the root's
// slots take their next batch themselves, without waiting for it). This
// needs MPI_THREAD_FUNNELED or more; at MPI_THREAD_SINGLE an MPI-only rank
// runs its callbacks on the calling goroutine instead, between messages,
// and a domain is refused. Pmap raises GOMAXPROCS to the rank's computing
// goroutines plus one for the call when it is lower, and restores it.
//
// Costs, measured on 2 cores (see the README): the root hands a batch to
// its own free slot in well under a microsecond; a remote slot pays one
// READY/TASK round trip per batch, a few microseconds on one host; an idle
// coordinator spins for about 20 µs, then sleeps in steps of at most
// 50 µs, which bounds how long a message waits for it.
//
// All traffic uses a private duplicate of comm, freed before Pmap returns,
// so the caller's own messages on comm are never consumed. Items and
// results crossing ranks are encoded with package wire (msgpack, with
// numeric slices in bulk); the root's own batches are never encoded.
//
// Errors are *PmapError. A failing entry check returns the same
// KindPreflight error on every rank before any scheduler message. After a
// callback error (or a wire error, or a cancelled ctx on some rank) no new
// batch is handed out, running batches finish, and every rank returns the
// same error: the one with the lowest key (lowest input index first). A
// callback that panics aborts the whole job with exit code ExitPanic, and so
// does a panic (or runtime.Goexit) in user code running on the calling
// goroutine, for example a custom msgpack encoder of an item or result; an
// MPI failure aborts it with ExitTransport, an internal protocol failure
// with ExitProtocol.
//
// ctx is checked at entry (in the preflight) and by the coordinator while
// the call runs; a batch that has started runs to its end. A rank whose
// ctx ends during the call reports a KindCanceled error, which every rank
// then returns.
func Pmap[T, U any](ctx context.Context, comm Comm, d *Domain, opts Options, rootItems Maybe[[]T], f func(T) (U, error)) ([]U, error) {
	if d != nil && d.foreign != nil {
		// A carrier domain of package lanes: its callback takes the slot.
		// A nil fn is a nil lanes callback: refused in the preflight.
		if d.foreign.fn == nil {
			g := func(int, T) (U, error) { var zero U; return zero, ErrNilCallback }
			return pmapOn(ctx, comm, d.foreign.exec, opts, rootItems, g, false, &failure{Code: failDomain, Message: ErrNilCallback.Error()})
		}
		g, _ := d.foreign.fn.(func(int, T) (U, error))
		if g == nil {
			panic("hataori: internal error: lanes callback of the wrong type")
		}
		return pmapOn(ctx, comm, d.foreign.exec, opts, rootItems, g, false, nil)
	}
	var exec slot.Executor
	var extra *failure
	if f == nil {
		// Refused in the preflight, on every rank, before any item runs.
		extra = &failure{Code: failDomain, Message: ErrNilCallback.Error()}
		f = func(T) (U, error) { var zero U; return zero, ErrNilCallback }
	}
	if d == nil {
		exec = helperExec{}
		if opts.Mode != Sequential && extra == nil {
			extra = &failure{Code: failDomain, Message: fmt.Sprintf("an MPI-only Pmap (nil domain) needs mode Sequential, got %v", opts.Mode)}
		}
	} else {
		exec = d.executor(opts.Mode)
	}
	g := func(_ int, item T) (U, error) { return f(item) }
	return pmapOn(ctx, comm, exec, opts, rootItems, g, opts.Mode != Outer, extra)
}

// CallStats is where one Pmap call's work went, as the root's scheduler
// saw it: Items[r][s] and Batches[r][s] are the items and batches slot s of
// rank r ran (the root's own slots included). Filling it costs one copy of
// two small tables at the end of the call.
type CallStats struct {
	Items, Batches [][]int64
}

// call is one Pmap call's state shared by the root's and the other ranks'
// sides.
type call[T, U any] struct {
	ctx         context.Context
	k           *collective
	root        int
	items       []T // the root's input
	f           func(int, T) (U, error)
	batch       int
	stopOnError bool // a batch stops after its first failing item
	inline      bool // the coordinator runs the callbacks (MPI_THREAD_SINGLE)
	prefetch    bool // a remote rank holds one batch beyond its running ones
	spare       bool // the rank may use more CPUs than its computing goroutines
	rep         *report
	pan         *panicSlot
	out         []U          // the root's result table
	stats       *sched.Stats // the root's scheduler statistics at the end
}

func pmapOn[T, U any](ctx context.Context, comm Comm, exec slot.Executor, opts Options, rootItems Maybe[[]T], f func(int, T) (U, error), stopOnError bool, extra *failure) ([]U, error) {
	exit, err := enterCollective()
	if err != nil {
		if errors.Is(err, errReentrant) {
			return nil, &PmapError{Kind: KindReentrant, Key: -1, Rank: -1, Message: err.Error(), err: err}
		}
		return nil, localPreflight(err)
	}
	defer exit()
	if ctx == nil {
		ctx = context.Background()
	}
	if _, ok := exec.(helperExec); ok {
		// MPI-only: offload the callbacks unless MPI forbids other threads.
		if lvl, err := mpi.QueryThread(); err == nil && lvl < mpi.ThreadFunneled {
			exec = helperExec{inline: true}
		}
	}
	k, err := openCollective(comm)
	if err != nil {
		return nil, localPreflight(err)
	}
	tracef("open rank=%d size=%d", k.rank, k.size)
	// From here every rank waits on the others: a panic or Goexit leaving
	// the call (user code runs here: encoders, decoders) aborts the job
	// instead of stranding them.
	normal := false
	defer func() {
		if !normal {
			k.abortPanicked("Pmap", recover())
		}
	}()
	defer keepCoordinatorResponsive(exec)()
	items, _ := rootItems.Get()
	c := &call[T, U]{
		ctx: ctx, k: k, root: opts.Root, items: items, f: f, stopOnError: stopOnError,
		inline: !exec.Offloads(), rep: newReport(k), pan: newPanicSlot(),
		spare: len(allowedCPUs()) > exec.Threads(),
	}
	var pf error
	var ran bool
	st := newSlotStart()
	coord := func() {
		ran = true
		// The slots are joined only after coord returns: abort here, on
		// the way out, rather than wait for them.
		fine := false
		defer func() {
			st.start(nil)
			if !fine {
				k.abortPanicked("Pmap", recover())
			}
		}()
		if pf = pmapPreflight(ctx, k, exec, &opts, rootItems.Present(), extra, nil, checkWireTypes[T, U]()); pf == nil {
			c.batch, c.prefetch = opts.BatchSize, opts.Prefetch
			c.run(exec.Slots(), st.start)
		}
		fine = true
	}
	if err := exec.Run(st.work, coord); err != nil && !ran {
		// Admission failed: the preflight still runs, so that every rank
		// returns the same error.
		pf = pmapPreflight(ctx, k, exec, &opts, rootItems.Present(), extra, err, checkWireTypes[T, U]())
	}
	if pf != nil {
		k.closeOrAbort()
		normal = true
		return nil, pf
	}
	if c.stats != nil && pmapRootStats != nil {
		pmapRootStats(*c.stats)
	}
	cerr := c.rep.converge()
	if cerr == nil && c.stats != nil && opts.Stats != nil {
		*opts.Stats = CallStats{Items: c.stats.Items, Batches: c.stats.Batches}
	}
	k.closeOrAbort()
	tracef("close")
	normal = true
	if cerr != nil {
		return nil, cerr
	}
	return c.out, nil
}

// localPreflight is the error of an entry check that fails on this rank
// alone, before any MPI call that could involve other ranks.
func localPreflight(err error) *PmapError {
	return &PmapError{Kind: KindPreflight, Key: -1, Rank: -1, Message: err.Error(), err: err}
}

// closeOrAbort frees the private communicator; failing to is a transport
// failure.
func (k *collective) closeOrAbort() {
	if err := k.close(); err != nil {
		abortJob(ExitTransport, fmt.Sprintf("freeing the private communicator: %v", err))
	}
}
