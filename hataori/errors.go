package hataori

import (
	"errors"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/seam"
)

// Every public sentinel of package hataori is in this file, grouped by the
// calls that return it; test them with [errors.Is]. The classes of a
// collective call's failure are the [ErrorKind] values.

// Sentinel errors of MPI and communicators.
var (
	// ErrNoMPI is returned by every MPI operation of a build with neither
	// the mpirt nor the mpicgo build tag.
	ErrNoMPI = errors.New("hataori: no MPI in this build (build with -tags mpirt or -tags mpicgo)")
	// ErrNotInitialized is returned by [World] when MPI has not been
	// initialised (call [InitThread], or initialise MPI elsewhere first).
	ErrNotInitialized = errors.New("hataori: MPI is not initialised")
	// ErrInvalidComm is returned by the methods of the zero [Comm] and of
	// a freed one.
	ErrInvalidComm = errors.New("hataori: invalid communicator (use World, Dup or CommFromHandle)")
	// ErrNotFreeable is returned by [Comm.Free] for a communicator
	// Hataori did not create (the world communicator, or one from
	// [CommFromHandle]).
	ErrNotFreeable = errors.New("hataori: communicator not created by Dup: Hataori does not free it")
)

// ErrThreadLevel is returned by [InitThread] for a level outside
// [ThreadSingle]..[ThreadMultiple].
var ErrThreadLevel = errors.New("hataori: invalid thread level")

// ErrMPI is matched by [errors.Is] against every *[MPIError].
var ErrMPI = errors.New("hataori: MPI call failed")

// ErrorKind classifies the failure of a collective call: the Kind of a
// [PmapError], a [CollectiveError] or an [ItemFailure]. Each kind is also an
// error value to test with [errors.Is], as [syscall.Errno] values are:
// errors.Is(err, KindUser) reports whether err is, or wraps, a *PmapError
// or *CollectiveError of kind KindUser. The kind travels between ranks, so
// the test gives the same answer on every rank of the call.
//
// The kinds are Hataori's only sentinels for these classes of failure:
// compare a Kind field with ==, switch on it, or match an error with
// errors.Is; it is the same classification.
type ErrorKind int

// The error kinds. Broadcast, Scatter and Gather report only KindPreflight,
// KindWire and KindProtocol.
const (
	// KindReentrant: a collective call was already active on this rank;
	// reported locally, before any MPI call.
	KindReentrant ErrorKind = iota + 1
	// KindPreflight: an entry check failed. Local entry checks (a domain
	// worker or a goroutine other than the MPI main thread calling) return
	// on that rank alone, before any MPI call; the collective preflight
	// (thread level, root, operation, options, payload, value types, mode,
	// admission, context) returns the lowest failing rank's error on every
	// rank, before any data frame is sent. The error also matches the
	// cause of the check that failed (see [ErrOptionsDiffer]).
	KindPreflight
	// KindUser: a callback returned an error.
	KindUser
	// KindWire: a value failed to encode, or a received frame or payload
	// was malformed or could not be decoded into the receiver's type.
	KindWire
	// KindProtocol: a well-formed message broke the protocol (an
	// unexpected message kind or item count) in a way the ranks could
	// still drain.
	KindProtocol
	// KindCanceled: a rank's context ended during the call (Pmap only).
	// It is also the cause, on every rank, of a KindPreflight failure for
	// a context already done when the call started (Pmap and the data
	// collectives), so errors.Is(err, KindCanceled) holds for both.
	KindCanceled
)

// kindNames holds each kind's name.
var kindNames = [...]string{
	KindReentrant: "reentrant",
	KindPreflight: "preflight",
	KindUser:      "user",
	KindWire:      "wire",
	KindProtocol:  "protocol",
	KindCanceled:  "canceled",
}

func (k ErrorKind) valid() bool { return k > 0 && int(k) < len(kindNames) }

// String returns the kind's name, for example "user".
func (k ErrorKind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error returns the kind's name, as String does, so that a kind prints the
// same with %v and %s whether it is seen as an error or a Stringer.
func (k ErrorKind) Error() string { return k.String() }

// is reports whether target is the kind k.
func (k ErrorKind) is(target error) bool {
	t, ok := target.(ErrorKind)
	return ok && k.valid() && t == k
}

// ErrNotMainThread is wrapped by the local preflight error of a collective
// call entered from a goroutine that is not the MPI main thread, and by
// the collective preflight error of a rank whose MPI_Is_thread_main says
// so (then on every rank).
var ErrNotMainThread = errors.New("hataori: not the MPI main thread")

// Causes of collective preflight failures. A preflight error (a
// [KindPreflight] *[PmapError] or *[CollectiveError]) unwraps, on every
// rank, to the sentinel of the check that failed on the lowest failing
// rank, so that errors.Is works the same everywhere; on that rank itself
// it unwraps to its own, more detailed error (which wraps the same
// sentinel). Besides these, a preflight failure can match [ErrDomainBusy],
// [ErrDomainClosed], [ErrInvalidMode], [ErrNoDomain] (executor admission
// or mode), [ErrNotMainThread], [ErrUnsupportedType], [KindCanceled] (a
// context already done), and lanes.ErrBusy or lanes.ErrNoEngine
// (lanes.PmapLanes).
var (
	// ErrThreadSupport: a domain or lanes need MPI_THREAD_FUNNELED or more,
	// and MPI provides less.
	ErrThreadSupport = errors.New("hataori: MPI thread support too low for offloaded callbacks")
	// ErrOptionsDiffer: the ranks passed different options (Pmap: the
	// agreed fields of [Options]; Broadcast, Scatter, Gather: operation or
	// root). The message names the lowest rank whose options differ from
	// rank 0's, and each field that differs.
	ErrOptionsDiffer = errors.New("hataori: ranks passed different options")
	// ErrInvalidOptions: an option is out of range on some rank (a root
	// outside the communicator, a negative batch size, an unknown error
	// policy).
	ErrInvalidOptions = errors.New("hataori: invalid options")
	// ErrPayload: items (or a Broadcast, Scatter or Gather value) were
	// passed on the wrong rank: the root passed [None], or another rank
	// passed [Some], or a shard count differs from the world size.
	ErrPayload = errors.New("hataori: payload on the wrong rank")
)

// ErrStopped is the cause (context.Cause) of the call context that
// [PmapContext] and lanes.PmapLanesContext give their callbacks, once the
// call is stopping because of a failure on some rank or a context that
// ended on another rank.
var ErrStopped = errors.New("hataori: the collective call is stopping")

func init() {
	for c, s := range map[seam.Cause]error{
		seam.CauseDomainBusy: ErrDomainBusy, seam.CauseDomainClosed: ErrDomainClosed,
		seam.CauseWorkerEntry: ErrWorkerEntry, seam.CauseInvalidMode: ErrInvalidMode,
		seam.CauseNoDomain: ErrNoDomain, seam.CauseNotMainThread: ErrNotMainThread,
		seam.CauseThreadLevel: ErrThreadSupport, seam.CauseOptionsDiffer: ErrOptionsDiffer,
		seam.CauseInvalidOptions: ErrInvalidOptions, seam.CausePayload: ErrPayload,
		seam.CauseCanceled: KindCanceled,
	} {
		seam.Register(c, s)
	}
}

// Sentinel errors of the local calls ([MapIn], [Domain.Parallel],
// [Domain.Close]). MapIn checks them before any callback runs, in the
// order ErrInvalidMode, ErrNoDomain, ErrDomainClosed, ErrWorkerEntry,
// ErrDomainBusy.
var (
	// ErrInvalidMode reports a [LocalMode] other than [Auto],
	// [Sequential], [Outer] or [Inner] (or, for an MPI-only Pmap, other
	// than Auto or Sequential).
	ErrInvalidMode = errors.New("hataori: invalid local mode")
	// ErrNoDomain reports a nil *[Domain], or a zero Domain (one not made
	// by [NewDomain] or [NewLocalDomain]).
	ErrNoDomain = errors.New("hataori: no domain")
	// ErrNilCallback reports a nil callback passed to [Map], [MapIn],
	// [Pmap] or the lanes calls; the call fails before any item runs.
	ErrNilCallback = errors.New("hataori: nil callback")
	// ErrDomainClosed reports use of a domain after Close.
	ErrDomainClosed = errors.New("hataori: domain is closed")
	// ErrWorkerEntry reports a call made from a worker of a domain (this
	// one or another), which would deadlock or oversubscribe the CPUs.
	ErrWorkerEntry = errors.New("hataori: called from a domain worker")
	// ErrDomainBusy reports that the domain is already admitted to another
	// operation. Admission never blocks.
	ErrDomainBusy = errors.New("hataori: domain is busy")
	// ErrNotLent reports a Domain.Parallel call while the domain is not
	// lent to an Inner item.
	ErrNotLent = errors.New("hataori: domain is not lent to an Inner item")
)

// Sentinel errors of domain construction ([NewDomain]), wrapped by
// *[DomainError].
var (
	// ErrInvalidPinning reports a [DomainConfig].Pinning other than
	// [Declared] or [Managed].
	ErrInvalidPinning = errors.New("hataori: invalid pinning mode")
	// ErrNoWorkers reports a worker count below one.
	ErrNoWorkers = errors.New("hataori: no workers requested")
	// ErrCPUNotAllowed reports a CPU outside the process's allowed set
	// (or a negative CPU number).
	ErrCPUNotAllowed = errors.New("hataori: cpu not in the process's allowed set")
	// ErrDuplicateCPU reports a CPU listed twice.
	ErrDuplicateCPU = errors.New("hataori: cpu listed twice")
	// ErrTooManyWorkers reports more workers than declared CPUs.
	ErrTooManyWorkers = errors.New("hataori: more workers than cpus")
	// ErrPinFailed reports that a worker could not be pinned to its CPU,
	// or that the pin did not verify.
	ErrPinFailed = errors.New("hataori: pinning a worker failed")
	// ErrStartTimeout reports a worker that did not start within
	// DomainConfig.StartTimeout.
	ErrStartTimeout = errors.New("hataori: worker did not start in time")
)

// ErrUnsupportedType is matched by errors.Is against the error of a
// collective call whose values cannot cross ranks without loss: a struct
// with an unexported field (unless tagged `msgpack:"-"`), a value of
// interface type (any included: its dynamic type does not survive, an int
// comes back as int8), a channel, function, unsafe.Pointer, uintptr or
// complex number (outside a top-level slice or Bulk), or a struct layout
// in which msgpack itself would lose a field. The error message names the
// type, the field path inside it and the fix, for example
//
//	type main.point cannot cross ranks: field x is unexported, …
//
// The check looks at the type alone, on every rank, before any data moves,
// and also in a world of one rank, so that a program that passes on one
// rank does not fail on many. A type with its own msgpack encoding methods
// (EncodeMsgpack/DecodeMsgpack and the like, on the type or its pointer) is
// trusted as it is.
var ErrUnsupportedType = unsupportedType()

// unsupportedType returns the wire type check's sentinel (a function only
// so that the public declaration names no internal package).
func unsupportedType() error { return wire.ErrUnsupportedType }

// MPIError is a failed MPI call. The Comm methods return it when an MPI
// call fails on a communicator whose errors are returned: World when
// InitThread initialised MPI, and every communicator from Dup (see
// CommFromHandle for one that is not Hataori's). Message is MPI's own
// description of Code (MPI_Error_string), for example "MPI_ERR_TRUNCATE:
// message truncated" (Open MPI) or "Message truncated, error stack: …"
// (MPICH). Codes differ between MPI libraries; match the type with
// errors.As, or any MPI failure with errors.Is(err, ErrMPI).
type MPIError struct {
	// Func is the MPI function, e.g. "MPI_Send".
	Func string
	// Code is the MPI error code, or -1 for a failure detected before MPI
	// was called (for example a buffer longer than an MPI count allows).
	Code int
	// Message is the MPI library's description, when available.
	Message string

	err error
}

// Error implements error.
func (e *MPIError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("hataori: %s failed (MPI error %d): %s", e.Func, e.Code, e.Message)
	}
	return fmt.Sprintf("hataori: %s failed (MPI error %d)", e.Func, e.Code)
}

// Unwrap returns the underlying library error, if any (for example an
// *mpiabi.Error or *mpiabi.LauncherError under mpirt).
func (e *MPIError) Unwrap() error { return e.err }

// Is reports whether target is ErrMPI.
func (e *MPIError) Is(target error) bool { return target == ErrMPI }

// mpiErr converts an error of the transport into a public one: ErrNoMPI,
// an *MPIError, or the error itself (an *mpiabi.LoadError under mpirt).
func mpiErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, mpi.ErrNoBackend) {
		return ErrNoMPI
	}
	var e *mpi.Error
	if errors.As(err, &e) {
		return &MPIError{Func: e.Func, Code: e.Code, Message: e.Msg, err: e.Err}
	}
	return err
}
