package hataori

import (
	"context"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/internal/slot"
)

// pmapPreflight is Pmap's one collective preflight. Every rank evaluates
// its local checks in a fixed order (thread, root, options, payload,
// executor and mode, context, admission), keeps the first failure, and
// the ranks agree: either every rank proceeds, or every rank returns the
// lowest failing rank's error. admitErr is this rank's executor admission
// failure (nil when the executor was claimed). It normalises
// opts.BatchSize (0 → 1). The ranks' slot counts travel right after it, in
// each rank's first READY (see collectSlots).
//
// typeErr is the result of the wire type check of the call's item and
// result types (checkWireTypes), refused as a failType failure whose cause,
// on every rank, matches ErrUnsupportedType.
func pmapPreflight(ctx context.Context, k *collective, exec slot.Executor, opts *Options, hasItems bool, extra *failure, admitErr, typeErr error) error {
	if opts.BatchSize == 0 {
		opts.BatchSize = 1
	}
	same, err := k.agreeInt64(packOptions(*opts))
	if err != nil {
		k.abortTransport(err)
	}
	local := pmapLocalChecks(ctx, k, exec, *opts, hasItems, same, extra)
	if local == nil && typeErr != nil {
		local = wireTypeFailure(typeErr)
		local.Message = fmt.Sprintf("rank %d: %s", k.rank, local.Message)
	}
	if local == nil && admitErr != nil {
		local = &failure{Code: failBusy, Message: fmt.Sprintf("rank %d: executor admission: %v", k.rank, admitErr)}
	}
	af, err := k.agree(local)
	if err != nil {
		k.abortTransport(err)
	}
	tracef("preflight ok=%v", af == nil)
	if af == nil {
		return nil
	}
	e := &PmapError{Kind: KindPreflight, Key: -1, Rank: af.Rank, Message: af.Message}
	if af.Rank == k.rank && local != nil {
		e.err = fmt.Errorf("%w: %s", ErrPreflight, local.Message)
	}
	if cause := wireTypeCause(af); cause != nil {
		e.err = cause
	}
	return e
}

// pmapLocalChecks returns this rank's first failing preflight check.
func pmapLocalChecks(ctx context.Context, k *collective, exec slot.Executor, opts Options, hasItems, same bool, extra *failure) *failure {
	fail := func(code int32, format string, args ...any) *failure {
		return &failure{Code: code, Message: fmt.Sprintf("rank %d: ", k.rank) + fmt.Sprintf(format, args...)}
	}
	if main, err := mpi.IsThreadMain(); err != nil || !main {
		return fail(failThread, "not the MPI main thread (MPI_Is_thread_main: %v, %v)", main, err)
	}
	if exec != nil && exec.Offloads() {
		lvl, err := mpi.QueryThread()
		if err != nil {
			return fail(failThread, "MPI_Query_thread: %v", err)
		}
		if lvl < mpi.ThreadFunneled {
			return fail(failThread, "offloaded callbacks (a domain or lanes) need MPI thread level %v or more, MPI provides %v", mpi.ThreadFunneled, lvl)
		}
	}
	switch {
	case opts.Root < 0 || opts.Root >= k.size:
		return fail(failRoot, "root %d outside [0, %d)", opts.Root, k.size)
	case opts.BatchSize < 0:
		return fail(failOptions, "negative batch size %d", opts.BatchSize)
	case !same:
		return fail(failOptions, "options differ between ranks (root %d, batch size %d, mode %v, prefetch %v here)", opts.Root, opts.BatchSize, opts.Mode, opts.Prefetch)
	case k.rank == opts.Root && !hasItems:
		return fail(failPayload, "the root passed no items (None)")
	case k.rank != opts.Root && hasItems:
		return fail(failPayload, "a non-root rank passed items (only root %d may)", opts.Root)
	case exec == nil:
		return fail(failDomain, "nil executor")
	case !opts.Mode.valid():
		return fail(failDomain, "invalid local mode %v", opts.Mode)
	case extra != nil:
		return fail(extra.Code, "%s", extra.Message)
	case ctx.Err() != nil:
		return fail(failContext, "context already done: %v", ctx.Err())
	}
	return nil
}

// packOptions folds the options into one int64 (63 bits: batch size 29,
// root 31, mode 2, prefetch 1) whose equality across ranks means the
// options are identical. Values that fail the local checks anyway (a
// negative batch size, a root outside [0, 2^31-1), an invalid mode)
// collapse to one code each; batch sizes of 2^29-1 or more collapse too,
// which changes nothing: only the root schedules, and such a batch size
// already puts any input in one batch.
func packOptions(o Options) int64 {
	clamp := func(v, hi int) int64 { return int64(min(max(v, -1), hi) + 1) }
	mode := int64(o.Mode)
	if !o.Mode.valid() {
		mode = 3
	}
	var pf int64
	if o.Prefetch {
		pf = 1
	}
	return clamp(o.BatchSize, 1<<29-2)<<34 | clamp(o.Root, 1<<31-2)<<3 | mode<<1 | pf
}
