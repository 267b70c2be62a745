//go:build mpirt && !mpicgo

package mpi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/mpiabi/launch"
)

var (
	// lib is the loaded MPIABI library (nil until Load succeeds).
	lib    atomic.Pointer[mpiabi.Lib]
	loadMu sync.Mutex

	// st is the status reused by Recv, Probe and Iprobe so that the hot
	// paths do not allocate. Only the MPI main thread uses it.
	st mpiabi.Status

	// zero gives empty buffers a valid, non-nil address.
	zero [1]byte

	// errNotLoaded is returned by the hot paths before Load succeeded.
	errNotLoaded = &Error{Func: "MPI", Code: CodeNotMPI, Msg: "the MPIABI library is not loaded (call Load or InitThread first)"}
)

// Backend names the backend compiled in: "mpirt".
func Backend() string { return "mpirt" }

// LinkedMPI returns "": under mpirt the MPI is chosen at run time by
// MPI_RT_LIB.
func LinkedMPI() string { return "" }

// Load opens the MPIABI library named by MPI_RT_LIB (once; later calls
// return nil). Its errors are *mpiabi.LoadError values naming the
// variable, the path, the stage and the missing symbol.
func Load() error {
	_, err := get()
	return err
}

// get returns the loaded library, loading it on first use.
func get() (*mpiabi.Lib, error) {
	if l := lib.Load(); l != nil {
		return l, nil
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if l := lib.Load(); l != nil {
		return l, nil
	}
	l, err := mpiabi.Load()
	if err != nil {
		return nil, err
	}
	idup, err := checkCollectiveSymbols(l)
	if err != nil {
		return nil, err
	}
	politeDup = idup // published by lib.Store
	lib.Store(l)
	return l, nil
}

// checkCollectiveSymbols refuses a library without the functions the
// collective calls' control collectives need (see Polite): optional for
// package mpiabi, required here, because every rank of a job must choose
// the same collectives, and a rank that silently fell back to blocking
// ones would leave the others waiting in nonblocking ones for ever. It
// also reports whether the collective calls duplicate with Idup: not under
// Open MPI (see Polite), as named by the library version string's MPI line
// (the wrapped MPI's under MPIwrapper, see launch.ParseVersion).
func checkCollectiveSymbols(l *mpiabi.Lib) (idup bool, err error) {
	missing := ""
	v, err := l.LibraryVersion()
	idup = err == nil && launch.FamilyOf(v) != launch.OpenMPI
	switch {
	case err != nil:
		missing = "MPIABI_Get_library_version"
	case !l.Nonblocking():
		missing = "MPIABI_Test, MPIABI_Ibarrier or MPIABI_Iallreduce"
	case idup && !l.HasCommIdup():
		missing = "MPIABI_Comm_idup"
	}
	if missing == "" {
		return idup, nil
	}
	return false, &mpiabi.LoadError{Var: "MPI_RT_LIB", Path: os.Getenv("MPI_RT_LIB"), Stage: "dlsym", Symbol: missing,
		Err: fmt.Errorf("%w: Hataori's collective calls need MPI-3 nonblocking collectives (rebuild an older wrapper with scripts/build-wrappers.sh)", mpiabi.ErrMissingSymbol)}
}

// wrap converts an mpiabi error into an *Error named after the MPI
// function.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var e *mpiabi.Error
	if errors.As(err, &e) {
		return &Error{Func: "MPI_" + strings.TrimPrefix(e.Func, "MPIABI_"), Code: e.Code, Msg: e.Text, Err: err}
	}
	return err
}

// bufPtr returns a valid address for buf (never nil) and its length.
func bufPtr(fn string, buf []byte) (unsafe.Pointer, int, error) {
	if len(buf) > maxCount {
		return nil, 0, countErr(fn, len(buf))
	}
	if len(buf) == 0 {
		return unsafe.Pointer(&zero[0]), 0, nil
	}
	return unsafe.Pointer(&buf[0]), len(buf), nil
}

// toNative maps a normalised level to the library's constant.
func toNative(l *mpiabi.Lib, t ThreadLevel) int {
	switch t {
	case ThreadFunneled:
		return l.ThreadFunneled
	case ThreadSerialized:
		return l.ThreadSerialized
	case ThreadMultiple:
		return l.ThreadMultiple
	}
	return l.ThreadSingle
}

// fromNative maps the library's constant to a normalised level.
func fromNative(l *mpiabi.Lib, v int) ThreadLevel {
	switch v {
	case l.ThreadMultiple:
		return ThreadMultiple
	case l.ThreadSerialized:
		return ThreadSerialized
	case l.ThreadFunneled:
		return ThreadFunneled
	}
	return ThreadSingle
}

// InitThread loads the library if needed, initialises MPI with the
// required thread level and returns the level provided.
func InitThread(required ThreadLevel) (ThreadLevel, error) {
	if required < ThreadSingle || required > ThreadMultiple {
		return ThreadSingle, levelErr(required)
	}
	l, err := get()
	if err != nil {
		return ThreadSingle, err
	}
	p, err := l.InitThread(toNative(l, required))
	if err != nil {
		return ThreadSingle, wrap(err)
	}
	recordInitThread()
	return fromNative(l, p), nil
}

// Initialized loads the library if needed and reports whether MPI has been
// initialised.
func Initialized() (bool, error) {
	l, err := get()
	if err != nil {
		return false, err
	}
	ok, err := l.Initialized()
	return ok, wrap(err)
}

// Finalized loads the library if needed and reports whether MPI has been
// finalised.
func Finalized() (bool, error) {
	l, err := get()
	if err != nil {
		return false, err
	}
	ok, err := l.Finalized()
	return ok, wrap(err)
}

// Finalize finalises MPI.
func Finalize() error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Finalize")
	return wrap(l.Finalize())
}

// QueryThread returns the thread level MPI provides.
func QueryThread() (ThreadLevel, error) {
	l, err := get()
	if err != nil {
		return ThreadSingle, err
	}
	assertMain("MPI_Query_thread")
	v, err := l.QueryThread()
	if err != nil {
		return ThreadSingle, wrap(err)
	}
	return fromNative(l, v), nil
}

// IsThreadMain reports whether the calling OS thread is the MPI main
// thread. It may be called from any thread.
func IsThreadMain() (bool, error) {
	l, err := get()
	if err != nil {
		return false, err
	}
	ok, err := l.IsThreadMain()
	return ok, wrap(err)
}

// World returns MPI_COMM_WORLD, or 0 when the library cannot be loaded.
func World() Handle {
	l, err := get()
	if err != nil {
		return 0
	}
	return Handle(l.CommWorld)
}

// Dup duplicates c.
func Dup(c Handle) (Handle, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Comm_dup")
	n, err := l.CommDup(mpiabi.Comm(c))
	return Handle(n), wrap(err)
}

// SetErrorsReturn sets MPI_ERRORS_RETURN on c (MPI_Comm_set_errhandler),
// so that an MPI error in a later call on c is returned as an *Error with
// MPI's error string instead of aborting the job.
func SetErrorsReturn(c Handle) error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Comm_set_errhandler")
	return wrap(l.CommSetErrhandler(mpiabi.Comm(c), l.ErrorsReturn))
}

// Free frees *c and sets it to MPI_COMM_NULL.
func Free(c *Handle) error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Comm_free")
	h := mpiabi.Comm(*c)
	err = l.CommFree(&h)
	*c = Handle(h)
	return wrap(err)
}

// Rank returns the rank of the caller in c.
func Rank(c Handle) (int, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Comm_rank")
	r, err := l.CommRank(mpiabi.Comm(c))
	return r, wrap(err)
}

// Size returns the number of processes in c.
func Size(c Handle) (int, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Comm_size")
	s, err := l.CommSize(mpiabi.Comm(c))
	return s, wrap(err)
}

// Send sends buf as MPI_BYTEs to dest with tag (blocking standard mode).
func Send(c Handle, buf []byte, dest, tag int) error {
	l := lib.Load()
	if l == nil {
		return errNotLoaded
	}
	assertMain("MPI_Send")
	p, n, err := bufPtr("MPI_Send", buf)
	if err != nil {
		return err
	}
	return wrap(l.Send(p, n, l.Byte, dest, tag, mpiabi.Comm(c)))
}

// status converts the reused status after a successful call.
func status(l *mpiabi.Lib) (Status, error) {
	n, err := byteCount(l, &st)
	if err != nil {
		return Status{}, err
	}
	return Status{Source: int(st.Source), Tag: int(st.Tag), Count: n}, nil
}

// Recv receives into buf from src with tag (AnySource / AnyTag allowed).
func Recv(c Handle, buf []byte, src, tag int) (Status, error) {
	l := lib.Load()
	if l == nil {
		return Status{}, errNotLoaded
	}
	assertMain("MPI_Recv")
	p, n, err := bufPtr("MPI_Recv", buf)
	if err != nil {
		return Status{}, err
	}
	if err := l.Recv(p, n, l.Byte, src, tag, mpiabi.Comm(c), &st); err != nil {
		return Status{}, wrap(err)
	}
	return status(l)
}

// Probe blocks until a message from src with tag can be received and
// describes it.
func Probe(c Handle, src, tag int) (Status, error) {
	l := lib.Load()
	if l == nil {
		return Status{}, errNotLoaded
	}
	assertMain("MPI_Probe")
	if err := l.Probe(src, tag, mpiabi.Comm(c), &st); err != nil {
		return Status{}, wrap(err)
	}
	return status(l)
}

// Iprobe reports whether a message from src with tag can be received, and
// describes it if so.
func Iprobe(c Handle, src, tag int) (bool, Status, error) {
	l := lib.Load()
	if l == nil {
		return false, Status{}, errNotLoaded
	}
	assertMain("MPI_Iprobe")
	ok, err := l.Iprobe(src, tag, mpiabi.Comm(c), &st)
	if err != nil || !ok {
		return false, Status{}, wrap(err)
	}
	s, err := status(l)
	return err == nil, s, err
}

// AnySource returns MPI_ANY_SOURCE (-1 when the library cannot be loaded).
func AnySource() int {
	l, err := get()
	if err != nil {
		return -1
	}
	return l.AnySource
}

// AnyTag returns MPI_ANY_TAG (-1 when the library cannot be loaded).
func AnyTag() int {
	l, err := get()
	if err != nil {
		return -1
	}
	return l.AnyTag
}

// AllreduceMinInt64s sets out[i] to the minimum of in[i] over c, in one
// MPI_Allreduce; in and out have the same, non-zero length.
func AllreduceMinInt64s(c Handle, in, out []int64) error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Allreduce")
	if len(in) != len(out) || len(in) == 0 {
		return errors.New("MPI_Allreduce: input and output lengths differ or are zero")
	}
	err = l.Allreduce(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), len(in), l.Int64, l.Min, mpiabi.Comm(c))
	return wrap(err)
}

// Polite reports how the collective calls should wait for other ranks:
// reduce is true when they should use IallreduceMinInt64s (and Ibarrier)
// completed by Test in a paced loop instead of blocking collectives, dup
// when they should also duplicate with Idup. The answer depends only on
// the MPI library underneath (by its MPI_Get_library_version; every symbol
// involved is required at load, see checkCollectiveSymbols), never on a
// rank's environment, so that every rank of a job makes the same choice: a
// blocking collective never matches a nonblocking one, and a barrier on
// some ranks only would hang. reduce is always true: MPICH spins in every
// blocking wait, and Open MPI does too unless its launcher marked the node
// oversubscribed, which can differ from node to node (and hosts that share
// cores without its knowing, such as containers or network namespaces on
// one machine, are not marked). dup is false under Open MPI, whose
// MPI_Comm_idup needs many rounds of progress, which a paced wait turns
// into hundreds of microseconds; the collective calls then precede a
// blocking duplicate by a paced barrier.
func Polite() (reduce, dup bool) {
	if _, err := get(); err != nil {
		return false, false
	}
	return true, politeDup
}

// politeDup is Polite's dup, decided when the library is loaded (written
// before lib is published, read only after).
var politeDup bool

// Ibarrier starts a barrier on c; complete it with Test.
func Ibarrier(c Handle) (Request, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Ibarrier")
	r, err := l.Ibarrier(mpiabi.Comm(c))
	return Request(r), wrap(err)
}

// IallreduceMinInt64s starts setting out[i] to the minimum of in[i] over
// c; complete it with Test. in and out have the same, non-zero length, and
// must be heap memory that the caller keeps referenced and untouched until
// Test reports completion.
func IallreduceMinInt64s(c Handle, in, out []int64) (Request, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Iallreduce")
	if len(in) != len(out) || len(in) == 0 {
		return 0, errors.New("MPI_Iallreduce: input and output lengths differ or are zero")
	}
	r, err := l.Iallreduce(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), len(in), l.Int64, l.Min, mpiabi.Comm(c))
	return Request(r), wrap(err)
}

// Isend starts sending buf to dest with tag; complete it with Test. buf
// must be heap memory that the caller keeps referenced and unmodified until
// Test reports completion.
func Isend(c Handle, buf []byte, dest, tag int) (Request, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Isend")
	p, n, err := bufPtr("MPI_Isend", buf)
	if err != nil {
		return 0, err
	}
	r, err := l.Isend(p, n, l.Byte, dest, tag, mpiabi.Comm(c))
	return Request(r), wrap(err)
}

// Idup starts duplicating c into *out (complete with Test; *out, heap
// memory the caller keeps referenced, holds the duplicate only then). It
// returns an error when the library lacks MPIABI_Comm_idup (see Nonblocking).
func Idup(c Handle, out *Handle) (Request, error) {
	l, err := get()
	if err != nil {
		return 0, err
	}
	assertMain("MPI_Comm_idup")
	r, err := l.CommIdup(mpiabi.Comm(c), (*mpiabi.Comm)(unsafe.Pointer(out)))
	return Request(r), wrap(err)
}

// Test reports whether *r has completed, driving MPI's progress; a
// completed request is freed.
func Test(r *Request) (bool, error) {
	l, err := get()
	if err != nil {
		return false, err
	}
	assertMain("MPI_Test")
	q := mpiabi.Request(*r)
	done, err := l.Test(&q, nil)
	*r = Request(q)
	return done, wrap(err)
}

// Bcast broadcasts buf from root to every process of c; every process
// passes a buffer of the same length.
func Bcast(c Handle, buf []byte, root int) error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Bcast")
	p, n, err := bufPtr("MPI_Bcast", buf)
	if err != nil {
		return err
	}
	return wrap(l.Bcast(p, n, l.Byte, root, mpiabi.Comm(c)))
}

// Barrier blocks until every process of c has entered it.
func Barrier(c Handle) error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Barrier")
	return wrap(l.Barrier(mpiabi.Comm(c)))
}

// Abort aborts every process of c with code, after a short pause
// (abortGrace) that lets the launcher forward what the process printed last.
// It does not return: if MPI_Abort returns (or the library cannot be loaded), the process exits
// with code.
func Abort(c Handle, code int) {
	time.Sleep(abortGrace)
	if l, err := get(); err == nil {
		_ = l.Abort(mpiabi.Comm(c), code)
	}
	os.Exit(code)
}

// CheckLauncher fails when the launcher announced a world size different
// from the size of c (a wrapper for one MPI started by the other MPI's
// launcher comes up as singletons). The error wraps *mpiabi.LauncherError,
// whose message says which launcher and library to pair.
func CheckLauncher(c Handle) error {
	l, err := get()
	if err != nil {
		return err
	}
	assertMain("MPI_Comm_size")
	if err := l.CheckLauncher(mpiabi.Comm(c)); err != nil {
		var le *mpiabi.LauncherError
		if errors.As(err, &le) {
			return &Error{Func: "CheckLauncher", Code: CodeNotMPI, Msg: err.Error(), Err: err}
		}
		return wrap(err)
	}
	return nil
}
