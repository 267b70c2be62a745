package hataori

import (
	"context"
	"errors"
	"fmt"
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
	// Prefetch asks for bounded prefetch. It is not implemented yet: the
	// preflight rejects it on every rank.
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
// With a domain d, callbacks run on d's workers in opts.Mode while the
// calling goroutine stays the coordinator that makes every MPI call (MPI
// must provide MPI_THREAD_FUNNELED or more). With d nil (MPI-only),
// callbacks run on the calling goroutine and opts.Mode must be Sequential.
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
// ctx is checked at entry (in the preflight) and between batches; a batch
// that has started runs to its end. A rank whose ctx ends during the call
// reports a KindCanceled error, which every rank then returns.
func Pmap[T, U any](ctx context.Context, comm Comm, d *Domain, opts Options, rootItems Maybe[[]T], f func(T) (U, error)) ([]U, error) {
	var exec Executor
	var extra *failure
	if d == nil {
		exec = inlineExecutor()
		if opts.Mode != Sequential {
			extra = &failure{Code: failDomain, Message: fmt.Sprintf("an MPI-only Pmap (nil domain) needs mode Sequential, got %v", opts.Mode)}
		}
	} else {
		exec = d.Executor(opts.Mode)
	}
	g := func(_ int, item T) (U, error) { return f(item) }
	return pmapOn(ctx, comm, exec, opts, rootItems, g, extra)
}

// PmapOn is Pmap over any Executor (the seam package lanes uses): f also
// receives the slot (worker or lane) that runs the item. opts.Mode is only
// checked for validity and agreement; exec decides how a batch runs.
func PmapOn[T, U any](ctx context.Context, comm Comm, exec Executor, opts Options, rootItems Maybe[[]T], f func(slot int, item T) (U, error)) ([]U, error) {
	return pmapOn(ctx, comm, exec, opts, rootItems, f, nil)
}

func pmapOn[T, U any](ctx context.Context, comm Comm, exec Executor, opts Options, rootItems Maybe[[]T], f func(int, T) (U, error), extra *failure) ([]U, error) {
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
	k, err := openCollective(comm)
	if err != nil {
		return nil, localPreflight(err)
	}
	tracef("open rank=%d size=%d", k.rank, k.size)
	// From here every rank waits on the others: a panic or Goexit leaving
	// the call (user code runs here: encoders, decoders, and with a nil
	// domain the callbacks) aborts the job instead of stranding them.
	normal := false
	defer func() {
		if !normal {
			k.abortPanicked("Pmap", recover())
		}
	}()
	items, _ := rootItems.Get()
	release, pf := pmapPreflight(ctx, k, exec, &opts, rootItems.Present(), extra)
	if pf != nil {
		k.closeOrAbort()
		normal = true
		return nil, pf
	}
	rep := newReport(k)
	var out []U
	if k.rank == opts.Root {
		out = runRoot(ctx, k, exec, items, f, opts.BatchSize, rep)
	} else {
		runRemote(ctx, k, exec, f, opts.Root, opts.BatchSize, rep)
	}
	release()
	cerr := rep.converge()
	k.closeOrAbort()
	tracef("close")
	normal = true
	if cerr != nil {
		return nil, cerr
	}
	return out, nil
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
