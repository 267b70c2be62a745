package mpi

import (
	"errors"
	"fmt"
)

// Handle is an MPI communicator handle: the backend's native handle
// widened to uintptr.
type Handle uintptr

// ThreadLevel is an MPI thread-support level, normalised to 0..3.
type ThreadLevel int

// The thread-support levels, in increasing order of support.
const (
	ThreadSingle     ThreadLevel = 0
	ThreadFunneled   ThreadLevel = 1
	ThreadSerialized ThreadLevel = 2
	ThreadMultiple   ThreadLevel = 3
)

// String returns the MPI name of the level.
func (l ThreadLevel) String() string {
	switch l {
	case ThreadSingle:
		return "MPI_THREAD_SINGLE"
	case ThreadFunneled:
		return "MPI_THREAD_FUNNELED"
	case ThreadSerialized:
		return "MPI_THREAD_SERIALIZED"
	case ThreadMultiple:
		return "MPI_THREAD_MULTIPLE"
	}
	return fmt.Sprintf("ThreadLevel(%d)", int(l))
}

// Status describes a received or probed message.
type Status struct {
	// Source is the rank of the sender.
	Source int
	// Tag is the message tag.
	Tag int
	// Count is the message size in bytes (MPI_Get_count with MPI_BYTE).
	Count int
}

// ErrNoBackend is returned by every call of a build with neither the mpirt
// nor the mpicgo tag.
var ErrNoBackend = errors.New("mpi: no MPI backend in this build (build with -tags mpirt or -tags mpicgo)")

// CodeNotMPI is the Error.Code of failures detected by this package before
// any MPI call (for example a buffer longer than an MPI count can express,
// or a thread level out of range).
const CodeNotMPI = -1

// Error is a failed MPI call.
type Error struct {
	// Func is the MPI function, e.g. "MPI_Send".
	Func string
	// Code is the MPI error code, or CodeNotMPI.
	Code int
	// Msg is the MPI error string or a description, when available.
	Msg string
	// Err is the underlying error (for example an *mpiabi.Error or
	// *mpiabi.LauncherError under mpirt), or nil.
	Err error
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Error implements error.
func (e *Error) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("mpi: %s failed (code %d): %s", e.Func, e.Code, e.Msg)
	}
	return fmt.Sprintf("mpi: %s failed (code %d)", e.Func, e.Code)
}

// Request is a pending nonblocking collective (Idup,
// IallreduceMinInt64s), completed by Test.
type Request uintptr
