package hataori

import (
	"errors"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// ErrMPI is matched by errors.Is against every *MPIError.
var ErrMPI = errors.New("hataori: MPI call failed")

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
