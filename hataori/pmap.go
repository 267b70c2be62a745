package hataori

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/internal/sched"
	"github.com/hataori/hataori-go/internal/seam"
)

// Options configures one [Pmap] or [PmapContext] call (and lanes.PmapLanes).
//
// Root, BatchSize, Mode, Prefetch and OnError must be equal on every rank:
// the collective preflight compares them and otherwise fails, on every
// rank, with a [KindPreflight] error matching [ErrOptionsDiffer] (or
// [ErrInvalidOptions] for a value out of range).
//
// Stats, OnProgress, ProgressEvery, Window, Unordered and ReuseBuffers
// are root-local: only the root reads them, other ranks may leave them
// zero, and they take no part in the agreement.
type Options struct {
	// Root is the rank that supplies the items and receives the results.
	Root int
	// BatchSize is the number of consecutive items handed out at once.
	// 0, the default, means automatic: the root measures every completed
	// batch (its items' compute time and, for another rank, the round
	// trip of its TASK) and sizes each rank's next batch so that the
	// per-batch overhead stays a small share (1/32) of its compute,
	// starting at one item and at most doubling per measured batch, while
	// no batch takes more than a factoring share of the items still
	// unassigned (remaining / (2 · slots)), so the last items spread over
	// every slot, nor more than 64 MiB of items or results in one frame
	// (measured per rank). A positive B fixes every batch at B items
	// exactly, whatever the bytes: batch k
	// holds items [k·B, min((k+1)·B, N)). A negative value is rejected by
	// the preflight.
	BatchSize int
	// Mode is the local mode of the domain passed to Pmap. The zero
	// value, [Auto], uses every worker: Outer (one slot per worker) on a
	// rank that passes a domain, Sequential (one helper goroutine) on an
	// MPI-only rank (nil domain). The ranks agree on Mode as passed, and
	// each resolves Auto for itself, so ranks with and without a domain
	// may mix. An MPI-only rank needs Auto or Sequential.
	Mode LocalMode
	// Stats, when not nil on the root, receives where the call's work and
	// time went (items, batches, busy and idle time per rank and slot,
	// bytes each way, and with RecordSpans every batch's span) once the
	// call has run, also after a failure that passed the preflight. It is
	// local: other ranks' Stats are left alone, and it takes no part in
	// the agreement of the options.
	Stats *CallStats
	// Prefetch forces bounded prefetch from the first batch: each non-root
	// rank holds at most one batch beyond the ones its slots run, received
	// while they compute, so that a slot that finishes a batch starts the
	// next one without waiting for a READY/TASK round trip. With automatic
	// sizes (BatchSize 0) the root turns the same prefetch on by itself,
	// per rank, once its measurements say the rank's round trip is a
	// measurable share of its batches (more than 1/16 of a batch's
	// compute); with a fixed BatchSize only this option turns it on. The
	// root never prefetches (its slots take their batches directly).
	// Memory: at most slots+1 batches of items and results per rank. It
	// applies to MPI-only ranks too (their callbacks run off the
	// coordinator), but not at MPI_THREAD_SINGLE, where the coordinator
	// runs them itself.
	Prefetch bool
	// OnError is what a failing item does to the call: [FailFast] (the
	// default) stops handing out work, [CollectAll] runs every item and
	// returns every success and every failure. See [ErrorPolicy].
	OnError ErrorPolicy
	// OnProgress, when not nil on the root, is called on the root's
	// coordinator (the goroutine that called Pmap, never a worker or
	// slot) while the call runs: when items finished since its last
	// call and at least ProgressEvery has passed, and once more at the
	// end of every call that passed the preflight, with the final counts
	// (Done == Total after a successful call). It must return quickly:
	// while it runs the coordinator answers no other rank. It is local:
	// other ranks' hooks are never called, and it takes no part in the
	// agreement of the options. A panic in it aborts the job (ExitPanic).
	OnProgress func(Progress)
	// ProgressEvery is the least interval between two OnProgress calls
	// (0: [DefaultProgressEvery], 100 ms).
	ProgressEvery time.Duration
	// Window bounds a [PmapStream] call's memory on the root: at most
	// Window items are read from the sequence and not yet through the
	// sink at any time (read ahead, in flight on any rank, or done and
	// waiting for an earlier one), whatever the input's length; when
	// the window is full the root stops dealing until the sink catches
	// up. 0 means [DefaultWindow]; a fixed BatchSize above it raises it to
	// one batch. A larger window keeps more slots busy behind a long
	// item (ordered) and allows larger automatic batches; a smaller one
	// bounds memory for large items or results: the window counts items,
	// not bytes, so with results of a MiB each the default would allow
	// 16 GiB (set Window so that Window times the size of an item and its
	// result fits). Root-local, like Stats; Pmap ignores it.
	Window int
	// Unordered hands a [PmapStream] call's results to its sink in the
	// order the batches complete instead of input order (i still names
	// each item's position), so that a long item holds back nothing but
	// itself. Root-local; Pmap ignores it.
	Unordered bool
	// ReuseBuffers lets a [PmapStream] call receive the bulk results of
	// other ranks ([]byte and numeric slice results, and Bulk fields
	// inside results) into a pool of buffers that the root reuses once
	// the sink has returned for the item's batch, instead of fresh memory
	// for each result: the root's memory then stays at about a window of
	// buffers, reused while they are warm, and the garbage collector has
	// nothing to collect. The price: such a value is valid only until the
	// sink returns for it (as bufio.Scanner.Bytes is until the next Scan):
	// the sink must copy what it keeps, and must not let the value escape.
	// Without it (the default) every value is the sink's to keep.
	// Root-local; Pmap ignores it (its results are the caller's).
	ReuseBuffers bool
}

// DefaultWindow is a [PmapStream] call's window (Options.Window) when
// none is set: 16384 items and results.
const DefaultWindow = 1 << 14

// ErrorPolicy is what a failing item (a callback error, or an item or
// result that cannot cross ranks) does to a Pmap call. Every rank must pass
// the same policy; the preflight checks it.
type ErrorPolicy uint8

const (
	// FailFast, the default: after the first failing item no new batch is
	// handed out, and every running batch stops before its next item above
	// the lowest failing index known (the items it skipped count as
	// canceled; the items below it still run, since one of them could fail
	// lower); every rank returns the error of the lowest failing index, as
	// if every dealt batch had run, whenever each failure became known. No
	// results are returned. The callbacks' context (see [PmapContext]) is
	// cancelled at the first failure all the same: a callback that
	// returns early on it ends its item as canceled, which never wins (so
	// the rule is exact for callbacks that do not).
	FailFast ErrorPolicy = iota
	// CollectAll: every item runs (a batch no longer stops at its first
	// failing item). The root returns the whole
	// result table, with the zero value at each failed index, and every
	// rank returns the same *PmapError whose Failures lists every failed
	// item in index order (see [PmapError].Failures). A call-level failure
	// (a context that ended, a frame that does not parse) still stops the
	// call as under FailFast, running batches included, but the root keeps
	// the results that arrived, and Failures lists every item without a
	// result.
	CollectAll
)

var policyNames = [...]string{FailFast: "FailFast", CollectAll: "CollectAll"}

// String returns "FailFast" or "CollectAll".
func (p ErrorPolicy) String() string {
	if p.valid() {
		return policyNames[p]
	}
	return fmt.Sprintf("ErrorPolicy(%d)", int(p))
}

func (p ErrorPolicy) valid() bool { return p <= CollectAll }

// Pmap applies f to every item of the root's input, dealing batches out
// dynamically to whichever rank is free, the root included, and returns
// the results in input order on the root (a non-nil slice, empty for an
// empty input) and nil elsewhere.
//
// Pmap is collective: every rank of comm calls it, in the same order
// relative to the other collective calls, with options that agree (see
// [Options]); only opts.Root passes Some(items), every other rank None. It
// must run on the MPI main thread: a program calls runtime.LockOSThread in
// an init function of package main and calls Pmap from the main
// goroutine. The calling goroutine makes every MPI call; f runs on the
// slots of d (one per worker in [Outer] mode, which the zero mode [Auto]
// means with a domain, one in [Sequential] or [Inner] mode) or, with d nil
// (mode Auto or Sequential), on a helper goroutine. A small call takes the
// short path instead: when the previous successful call with the same f
// (the same function literal or function) on comm with the same root
// shows that this rank's share of the work is at most 250 µs of callback
// time (on the root: the input's length times the previous cost per item;
// elsewhere: the previous call's callback time), the rank runs its
// callbacks on the calling goroutine between messages (the root runs the
// whole input so, before it deals to any rank), sparing the hand-offs to
// a slot or another rank and the GOMAXPROCS change that cost more than
// such a call's work (an [Outer] or [Sequential] domain stays claimed for the
// call; an [Inner] domain, lanes, Prefetch and a stream's root never take
// it). A domain needs [ThreadFunneled] or more. Items and
// results that cross ranks must pass the type check of
// [ErrUnsupportedType]. A result's memory must not change once f has
// returned it: on the root it is the result itself, and on another rank
// the data of a large bulk result (a []byte or numeric slice, or a Bulk
// inside one) is sent from there, after f returns. The caller's own
// messages on comm are never consumed. The costs of a call are in docs/PERFORMANCE.md.
//
// Errors are *[PmapError], and every rank returns the same one. A failing
// entry check returns a [KindPreflight] error before any item runs. Under
// the default [FailFast] policy, after a failing item no new batch is
// handed out, running batches stop before their next item above the
// lowest failing index known, and the error of the lowest failing index
// wins, as if every dealt batch had run; under
// [CollectAll] every item runs and the root also gets every successful
// result. A rank whose ctx ends during the call makes every rank return a
// [KindCanceled] error, and running batches stop before their next item
// (an item already running finishes: see PmapContext to stop it early).
// Stopping takes effect between items, so it is as prompt as one item is
// long, however large the batches. A callback that panics
// aborts the whole job with exit code ExitPanic, as does a panic in user
// code on the calling goroutine (a custom msgpack encoder, the
// OnProgress hook); an MPI failure aborts it with ExitTransport.
func Pmap[T, U any](ctx context.Context, comm Comm, d *Domain, opts Options, rootItems Maybe[[]T], f func(T) (U, error)) ([]U, error) {
	var g func(context.Context, T) (U, error) // nil stays nil: refused in the preflight
	if f != nil {
		g = func(_ context.Context, item T) (U, error) { return f(item) }
	}
	items, _ := rootItems.Get()
	return pmapWith(ctx, comm, d, opts, pmapInput[T, U]{present: rootItems.Present(), items: items, fn: funcCode(f), plain: true}, g, nil)
}

// PmapContext is [Pmap] whose callback receives the call's context: a child
// of ctx that is also cancelled, on every rank, once the call is stopping
// (under FailFast an item failed somewhere; under either policy some rank's
// ctx ended, or a frame failed). context.Cause then returns [ErrStopped] on
// the ranks Hataori cancelled, or this rank's own ctx's cause. A long
// callback polls ctx.Done() (or passes ctx on) to return early.
//
// An item that fails with the call's own cancellation (its error matches
// context.Canceled, context.DeadlineExceeded or ErrStopped, and the call's
// context had ended) is a consequence, not a cause: it never wins over the
// failure that stopped the call. Under CollectAll it is listed with Kind
// [KindCanceled].
func PmapContext[T, U any](ctx context.Context, comm Comm, d *Domain, opts Options, rootItems Maybe[[]T], f func(ctx context.Context, item T) (U, error)) ([]U, error) {
	items, _ := rootItems.Get()
	return pmapWith(ctx, comm, d, opts, pmapInput[T, U]{present: rootItems.Present(), items: items, fn: funcCode(f)}, f, nil)
}

// pmapInput is what the root passes a call: a slice (Pmap) or a stream
// (PmapStream); present tells whether this rank passed Some. fn is the
// caller's callback's code on every rank (funcCode), the short path's key.
type pmapInput[T, U any] struct {
	present bool
	items   []T
	stream  *streamSpec[T, U]
	fn      uintptr
	plain   bool // the caller's callback takes no context (Pmap's)
}

// inputLen is the root's input length, -1 for a stream.
func (in pmapInput[T, U]) inputLen() int {
	if in.stream != nil {
		return -1
	}
	return len(in.items)
}

// pmapWith is PmapContext and PmapStream on d (a domain, nil, or a lanes
// carrier) once the input is known; extra is a failure the caller found
// before the call (refused in the preflight).
func pmapWith[T, U any](ctx context.Context, comm Comm, d *Domain, opts Options, in pmapInput[T, U], f func(ctx context.Context, item T) (U, error), extra *failure) ([]U, error) {
	if d != nil && d.foreign != nil {
		return pmapForeign(ctx, comm, d.foreign, opts, in, extra)
	}
	var exec seam.Executor
	if f == nil {
		// Refused in the preflight, on every rank, before any item runs.
		extra = cmp.Or(extra, &failure{Code: failDomain, Err: ErrNilCallback, Message: ErrNilCallback.Error()})
		f = func(context.Context, T) (U, error) { var zero U; return zero, ErrNilCallback }
	}
	if d == nil {
		exec = helperExec{}
		if opts.Mode.resolve(false) != Sequential && extra == nil {
			extra = &failure{Code: failDomain, Err: ErrInvalidMode, Message: fmt.Sprintf("an MPI-only Pmap (nil domain) needs mode Auto or Sequential, got %v", opts.Mode)}
		}
	} else {
		exec = d.executor(opts.Mode)
	}
	g := func(ctx context.Context, _ int, item T) (U, error) { return f(ctx, item) }
	return pmapOn(ctx, comm, exec, opts, in, g, extra)
}

// call is one Pmap call's state shared by the root's and the other ranks'
// sides.
type call[T, U any] struct {
	ctx         context.Context         // the caller's
	cctx        context.Context         // the callbacks': ctx, also cancelled when the call stops
	cancel      context.CancelCauseFunc // cancels cctx
	t0          time.Time               // the end of the preflight
	k           *coll.Coll
	root        int
	items       []T               // the root's input (Pmap)
	stream      *streamSpec[T, U] // the root's stream (PmapStream)
	f           itemFunc[T, U]
	batch       int
	stopOnError bool       // FailFast: a batch stops after its first failing item
	low         *failIndex // FailFast: the lowest failing index this rank knows (see stopRule)
	collect     bool       // CollectAll
	inline      bool       // the coordinator runs the callbacks (MPI_THREAD_SINGLE, the short path, or remoteInline)
	inlineQueue bool       // inline by remoteInline: a prefetched TASK waits for the running batch
	short       shortKey   // where this rank's cost is remembered (zero fn: nowhere)
	alone       bool       // the short path's root runs every item, no frame is sent (agreed in the preflight)
	cost        shortCost  // what this rank measured, for the short path (set by runRoot, runRemote)
	prefetch    bool       // a remote rank holds one batch beyond its running ones
	rep         *report
	pan         *firstPanic
	out         []U // the root's result table

	onProgress    func(Progress) // the root's hook (nil: none)
	progressEvery time.Duration

	stats      *CallStats   // the root's Options.Stats (nil: not wanted)
	schedStats *sched.Stats // the root's scheduler statistics at the end
	callStats  *CallStats   // what the root fills opts.Stats with
}

func pmapOn[T, U any](ctx context.Context, comm Comm, exec seam.Executor, opts Options, in pmapInput[T, U], f itemFunc[T, U], extra *failure) ([]U, error) {
	exit, err := enterCollective("Pmap")
	if err != nil {
		if errors.Is(err, errReentrant) {
			return nil, &PmapError{Kind: KindReentrant, Index: -1, Key: -1, Rank: -1, Message: err.Error(), err: err}
		}
		return nil, localPreflight(err)
	}
	defer exit()
	if ctx == nil {
		ctx = context.Background()
	}
	lvl, err := mpi.QueryThread()
	threads := err == nil && lvl >= mpi.ThreadFunneled
	if _, ok := exec.(helperExec); ok && err == nil && !threads {
		// MPI-only: offload the callbacks unless MPI forbids other threads.
		exec = helperExec{inline: true}
	}
	k, err := openCollective(comm)
	if err != nil {
		return nil, localPreflight(err)
	}
	var short shortKey
	taken := false
	if !opts.Prefetch { // forced overlap: the slots take the call
		exec, short, taken = shortPath(exec, threads, shortKey{comm: comm.h, fn: in.fn, root: opts.Root}, k.Rank == opts.Root, in.inputLen())
	}
	ruled := remoteInline(exec, k.Rank != opts.Root, opts.Prefetch, in.plain)
	if ruled {
		exec = helperExec{inline: true}
	}
	tracef("open rank=%d size=%d", k.Rank, k.Size)
	// From here every rank waits on the others: a panic or Goexit leaving
	// the call (user code runs here: encoders, decoders, the progress
	// hook) aborts the job instead of stranding them.
	normal := false
	defer func() {
		if !normal {
			k.AbortPanicked("Pmap", recover())
		}
	}()
	defer keepCoordinatorResponsive(exec)()
	c := newCall(ctx, k, exec, &opts, in.items, f)
	c.short, c.alone, c.inlineQueue = short, taken && k.Rank == opts.Root, ruled
	if k.Rank == opts.Root {
		c.stream = in.stream
	}
	out, err := c.finish(&opts, c.runOn(exec, &opts, in.present, extra))
	normal = true
	return out, err
}

// newCall builds the state of one Pmap call on k, run by exec with opts;
// items are the root's (nil elsewhere).
func newCall[T, U any](ctx context.Context, k *coll.Coll, exec seam.Executor, opts *Options, items []T, f itemFunc[T, U]) *call[T, U] {
	collect := opts.OnError == CollectAll
	c := &call[T, U]{
		ctx: ctx, k: k, root: opts.Root, items: items, f: f, stopOnError: !collect, collect: collect,
		inline: !exec.Offloads(), rep: newReport(k, opts.Root, collect), pan: newFirstPanic(), low: newFailIndex(),
	}
	if k.Rank == opts.Root {
		c.stats, c.onProgress, c.progressEvery = opts.Stats, opts.OnProgress, opts.ProgressEvery
		if c.progressEvery <= 0 {
			c.progressEvery = DefaultProgressEvery
		}
	}
	return c
}

// runOn runs the call on exec: its coordinator (on the calling
// goroutine) runs the preflight and then the root's or the remote
// rank's engine, with exec's slots. It returns the preflight's error,
// the same on every rank. When exec cannot admit the call, the preflight
// still runs (with that error), so that every rank returns the same
// error. present tells whether this rank passed root items; extra is a
// failure the caller found before the call.
func (c *call[T, U]) runOn(exec seam.Executor, opts *Options, present bool, extra *failure) (pf error) {
	ran := false
	st := newSlotStart()
	coord := func() {
		ran = true
		// The slots are joined only after coord returns: abort here, on
		// the way out, rather than wait for them.
		fine := false
		defer func() {
			st.start(nil)
			if !fine {
				c.k.AbortPanicked("Pmap", recover())
			}
		}()
		if c.alone, pf = pmapPreflight(c.ctx, c.k, exec, opts, present, c.alone, extra, nil, checkWireTypes[T, U]()); pf == nil {
			c.batch, c.prefetch = opts.BatchSize, opts.Prefetch
			c.t0 = time.Now()
			c.cctx, c.cancel = context.WithCancelCause(c.ctx)
			defer c.cancel(context.Canceled)
			c.run(exec.Slots(), st.start)
		}
		fine = true
	}
	if err := exec.Run(st.work, coord); err != nil && !ran {
		_, pf = pmapPreflight(c.ctx, c.k, exec, opts, present, false, extra, err, checkWireTypes[T, U]())
	}
	return pf
}

// finish ends the call after runOn (pf its preflight error): it converges
// the ranks' faults into the call's one error, fills opts.Stats and
// frees the call's communicator.
func (c *call[T, U]) finish(opts *Options, pf error) ([]U, error) {
	if pf != nil {
		c.k.Reusable = true // a preflight failure sent no frame
		c.k.CloseOrAbort()
		return nil, pf
	}
	debugRootStats(c.schedStats)
	cerr := c.rep.converge()
	if c.callStats != nil && opts.Stats != nil {
		*opts.Stats = *c.callStats
	}
	if cerr == nil {
		noteShort(c.short, c.cost)
	}
	c.k.Reusable = pmapReusable(cerr) // the converged outcome: alike on every rank
	c.k.CloseOrAbort()
	tracef("close")
	if cerr != nil {
		if c.collect {
			return c.out, cerr
		}
		return nil, cerr
	}
	return c.out, nil
}

// localPreflight is the error of an entry check that fails on this rank
// alone, before any MPI call that could involve other ranks.
func localPreflight(err error) *PmapError {
	return &PmapError{Kind: KindPreflight, Index: -1, Key: -1, Rank: -1, Message: err.Error(), err: err}
}
