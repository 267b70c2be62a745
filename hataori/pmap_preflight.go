package hataori

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/seam"
)

// pmapPreflight is Pmap's one collective preflight. Every rank
// evaluates its local checks in a fixed order (thread, root, options,
// payload, executor and mode, context, then the wire type check of the
// call's item and result types, then admission), keeps the first failure,
// and the ranks agree: either every rank proceeds, or every rank returns
// the lowest failing rank's error, which unwraps on every rank to the
// failed check's sentinel (a type failure to an error matching
// ErrUnsupportedType). alone is the root's announcement that it runs the
// whole call itself (the short path, call.alone): the agreement returns
// it to every rank when every rank passed. admitErr is this rank's
// executor admission failure
// (nil when the executor was claimed), typeErr the result of
// checkWireTypes. A BatchSize of 0 (automatic) is agreed as it is. The
// ranks' slot counts travel right after it, in each rank's first READY (see
// collectSlots).
//
// When every rank passed the same options, the agreement is one MPI
// reduction (agreeAndCompare: the packed options and the checks' outcome in
// one vector), plus one broadcast of the failure when a check failed. When
// the options differ (the same reduction says so, on every rank alike),
// rank 0 broadcasts its packed options, each rank reruns its checks against
// them, and a second agreement returns the lowest failing rank's error
// (a differing rank names every field that differs from rank 0's): a
// broadcast and a reduction more, on that failure path only. Data
// collectives take the same path when their words differ, so a rank that
// called Pmap while another called Broadcast fails with them.
func pmapPreflight(ctx context.Context, k *coll.Coll, exec seam.Executor, opts *Options, hasItems, alone bool, extra *failure, admitErr, typeErr error) (bool, error) {
	mine := packOptions(*opts)
	checks := func(ref int64) *failure {
		local := pmapLocalChecks(ctx, k, exec, *opts, hasItems, ref, extra)
		if local == nil && typeErr != nil {
			local = wireTypeFailure(typeErr)
			local.Message = fmt.Sprintf("rank %d: %s", k.Rank, local.Message)
		}
		if local == nil && admitErr != nil {
			local = &failure{Code: failBusy, Message: fmt.Sprintf("rank %d: executor admission: %v", k.Rank, admitErr), Err: admitErr}
		}
		return local
	}
	// The checks run first as if every rank had this rank's options,
	// which is then the case; when the options differ, again against rank
	// 0's.
	af, alone := k.PreflightAgree(mine, alone, checks(mine), checks)
	tracef("preflight ok=%v alone=%v", af == nil, alone)
	if af == nil {
		return alone, nil
	}
	return false, &PmapError{Kind: KindPreflight, Key: -1, Index: -1, Rank: af.Rank, Message: af.Message, err: preflightCause(af)}
}

// pmapLocalChecks returns this rank's first failing preflight check; ref
// is rank 0's packed options (this rank's own when every rank agreed).
func pmapLocalChecks(ctx context.Context, k *coll.Coll, exec seam.Executor, opts Options, hasItems bool, ref int64, extra *failure) *failure {
	fail := func(code int32, cause error, format string, args ...any) *failure {
		return &failure{Code: code, Err: cause, Message: fmt.Sprintf("rank %d: ", k.Rank) + fmt.Sprintf(format, args...)}
	}
	if main, err := mpi.IsThreadMain(); err != nil || !main {
		return fail(failThread, ErrNotMainThread, "not the MPI main thread (MPI_Is_thread_main: %v, %v): %s", main, err, mainThreadFix)
	}
	if exec != nil && exec.Offloads() {
		lvl, err := mpi.QueryThread()
		if err != nil {
			return fail(failThread, ErrThreadSupport, "MPI_Query_thread: %v", err)
		}
		if lvl < mpi.ThreadFunneled {
			return fail(failThread, ErrThreadSupport, "offloaded callbacks (a domain or lanes) need MPI thread level %v or more, MPI provides %v", mpi.ThreadFunneled, lvl)
		}
	}
	switch {
	case opts.Root < 0 || opts.Root >= k.Size:
		return fail(failRoot, ErrInvalidOptions, "root %d outside [0, %d)", opts.Root, k.Size)
	case opts.BatchSize < 0:
		return fail(failOptions, ErrInvalidOptions, "negative batch size %d", opts.BatchSize)
	case !opts.OnError.valid():
		return fail(failOptions, ErrInvalidOptions, "unknown error policy %v", opts.OnError)
	case packOptions(opts) != ref:
		return fail(failOptions, ErrOptionsDiffer, "options differ from rank 0's: %s", optionsDiff(unpackOptions(packOptions(opts)), unpackOptions(ref)))
	case k.Rank == opts.Root && !hasItems:
		return fail(failPayload, ErrPayload, "the root passed no items (None)")
	case k.Rank != opts.Root && hasItems:
		return fail(failPayload, ErrPayload, "a non-root rank passed items (only root %d may)", opts.Root)
	case exec == nil:
		return fail(failDomain, ErrNoDomain, "nil executor")
	case !opts.Mode.valid():
		return fail(failDomain, ErrInvalidMode, "invalid local mode %v", opts.Mode)
	case extra != nil:
		return fail(extra.Code, extra.Err, "%s", extra.Message)
	case ctx.Err() != nil:
		return fail(failContext, fmt.Errorf("hataori: collective call %w: %w", KindCanceled, context.Cause(ctx)), "context already done: %v", ctx.Err())
	}
	return nil
}

// Bits of the packed options word (59 in all), low to high.
const (
	packPolicyBits   = 2
	packPrefetchBits = 1
	packModeBits     = 3
	packRootBits     = 24
	packBatchBits    = 29

	packPrefetchShift = packPolicyBits
	packModeShift     = packPrefetchShift + packPrefetchBits
	packRootShift     = packModeShift + packModeBits
	packBatchShift    = packRootShift + packRootBits

	invalidModeCode = 1<<packModeBits - 1 // the packed mode of an invalid LocalMode
)

// packOptions folds the agreed options into one int64 (59 bits: batch size
// 29, root 24, mode 3, prefetch 1, error policy 2) whose equality across
// ranks means the options are identical. Values that fail the local checks
// anyway (a negative batch size, a root outside [0, 2^24-2), an invalid mode
// or policy) collapse to one code each; batch sizes of 2^29-1 or more
// collapse too, which changes nothing: only the root schedules, and such a
// batch size already puts any input in one batch. (A root of 2^24-2 or more
// would need a communicator of over 16 million ranks.)
func packOptions(o Options) int64 {
	clamp := func(v, bits int) int64 { return int64(min(max(v, -1), 1<<bits-2) + 1) }
	mode := int64(o.Mode) // as passed: Auto is agreed before each rank resolves it
	if !o.Mode.valid() {
		mode = invalidModeCode
	}
	var pf int64
	if o.Prefetch {
		pf = 1
	}
	pol := int64(o.OnError)
	if !o.OnError.valid() {
		pol = 3
	}
	return clamp(o.BatchSize, packBatchBits)<<packBatchShift | clamp(o.Root, packRootBits)<<packRootShift |
		mode<<packModeShift | pf<<packPrefetchShift | pol
}

// packedOptions is a packed options word taken apart (each field still in
// its packed code: value+1 for batch size and root, invalidModeCode for an
// invalid mode, 3 for an invalid policy).
type packedOptions struct{ batch, root, mode, prefetch, policy int64 }

func unpackOptions(v int64) packedOptions {
	field := func(shift, bits int) int64 { return v >> shift & (1<<bits - 1) }
	return packedOptions{
		batch: field(packBatchShift, packBatchBits), root: field(packRootShift, packRootBits),
		mode: field(packModeShift, packModeBits), prefetch: field(packPrefetchShift, packPrefetchBits),
		policy: field(0, packPolicyBits),
	}
}

// optionsDiff names every field in which here differs from rank 0's
// options, for example "batch size 3 here, 1 on rank 0".
func optionsDiff(here, r0 packedOptions) string {
	num := func(code int64, bits int) string {
		switch {
		case code == 0:
			return "negative"
		case code == 1<<bits-1:
			return fmt.Sprintf("%d or more", code-1)
		}
		return fmt.Sprint(code - 1)
	}
	mode := func(code int64) string {
		if code == invalidModeCode {
			return "an invalid mode"
		}
		return LocalMode(code).String()
	}
	policy := func(code int64) string {
		if code == 3 {
			return "an unknown policy"
		}
		return ErrorPolicy(code).String()
	}
	var parts []string
	add := func(name, a, b string) {
		if a != b {
			parts = append(parts, fmt.Sprintf("%s %s here, %s on rank 0", name, a, b))
		}
	}
	add("root", num(here.root, packRootBits), num(r0.root, packRootBits))
	batch := func(code int64) string {
		if code == 1 { // 0: automatic sizes
			return "automatic"
		}
		return num(code, packBatchBits)
	}
	add("batch size", batch(here.batch), batch(r0.batch))
	add("mode", mode(here.mode), mode(r0.mode))
	add("prefetch", fmt.Sprint(here.prefetch == 1), fmt.Sprint(r0.prefetch == 1))
	add("error policy", policy(here.policy), policy(r0.policy))
	return strings.Join(parts, "; ")
}

// checkWireTypes is the preflight type check of a collective call that
// moves values of type T one way and values of type U the other (Pmap:
// items and results): nil when both cross ranks exactly, otherwise the
// *wire.Error (kind wire.ErrType, matching ErrUnsupportedType) for T, or
// else for U. It is cached per type, so a repeated call costs two map
// lookups. Turn a non-nil result into the local preflight failure with
// wireTypeFailure and, after the ranks agreed on a failure of code
// failType, rebuild the cause every rank returns with wireTypeCause.
func checkWireTypes[T, U any]() error {
	if err := checkWireType[T](); err != nil {
		return err
	}
	return checkWireType[U]()
}

// checkWireType is checkWireTypes for the one value type of a data collective
// call.
func checkWireType[T any]() error { return wire.CheckType(reflect.TypeFor[T]()) }

// wireTypeFailure is the preflight failure for err, an error of
// checkWireTypes: code failType, and the type check's message without its
// "hataori: " prefix (the collective error adds its own).
func wireTypeFailure(err error) *failure {
	msg := err.Error()
	var we *wire.Error
	if errors.As(err, &we) {
		msg = we.Detail
	}
	return &failure{Code: failType, Message: msg}
}

// wireTypeCause returns the cause of an agreed preflight failure, the same
// on every rank: for code failType a *wire.Error of kind wire.ErrType
// carrying the agreed message (so errors.Is(err, ErrUnsupportedType)
// holds), for any other code nil.
func wireTypeCause(a *agreedFailure) error {
	if a == nil || a.Code != failType {
		return nil
	}
	return &wire.Error{Kind: wire.ErrType, Detail: a.Message}
}

// preflightCause is what the error of an agreed preflight failure unwraps
// to: the rebuilt type error for failType (wireTypeCause, equal on every
// rank), otherwise the agreed cause (the failing rank's own error there,
// its registered sentinel on every other rank), or nil.
func preflightCause(a *agreedFailure) error {
	if c := wireTypeCause(a); c != nil {
		return c
	}
	if a == nil {
		return nil
	}
	return a.Cause
}
