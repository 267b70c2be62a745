package mpiabi

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors carried by *LoadError; test for them with errors.Is.
var (
	// ErrNotSet: MPI_RT_LIB is unset or empty, or Open got an empty path.
	ErrNotSet = errors.New("MPIABI library not specified")
	// ErrNotMPIABI: the library loads but has no mpiabi_version_major
	// symbol, e.g. a native libmpi.so or an MPI-5 ABI libmpi_abi.so.
	ErrNotMPIABI = errors.New("not an MPIABI 2.x library (no mpiabi_version_major symbol)")
	// ErrVersion: the library speaks an MPIABI major version other than 2.
	ErrVersion = errors.New("unsupported MPIABI major version (need 2)")
	// ErrMissingSymbol: a function or constant this package needs is not
	// exported by the library.
	ErrMissingSymbol = errors.New("symbol not found")
	// ErrVtableOnly: the library exports only mpiwrapper_get_vtable (a
	// newer mpi_abi_wrapper build also named libmpiwrapper.so), not the
	// MPIABI_* symbols of MPIwrapper 2.x.
	ErrVtableOnly = errors.New("library exports only mpiwrapper_get_vtable (an mpi_abi_wrapper build, not MPIwrapper 2.x with MPIABI_* symbols)")
	// ErrNilStatus: GetCount was called with a nil *Status.
	ErrNilStatus = errors.New("mpiabi: GetCount needs a non-nil *Status")
)

// LoadError is the one error Open and Load return. It names the environment
// variable (when the path came from one), the library path, the stage that
// failed ("env", "open", "dlopen", "version", "dlsym") and the missing
// symbol, and wraps the cause: a sentinel above, an fs error, or the dynamic
// loader's message.
type LoadError struct {
	Var    string // environment variable the path came from, e.g. "MPI_RT_LIB"
	Path   string // library path as given
	Stage  string // "env", "open", "dlopen", "version" or "dlsym"
	Symbol string // the symbol being looked up, if any
	Err    error  // the cause
}

// Error names every field that is set, then the cause.
func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString("mpiabi: cannot load MPIABI library (")
	var parts []string
	if e.Var != "" {
		parts = append(parts, "variable "+e.Var)
	}
	if e.Path != "" || e.Stage != "env" {
		parts = append(parts, "path "+strconv.Quote(e.Path))
	}
	if e.Stage != "" {
		parts = append(parts, "stage "+e.Stage)
	}
	if e.Symbol != "" {
		parts = append(parts, "symbol "+e.Symbol)
	}
	b.WriteString(strings.Join(parts, ", "))
	b.WriteString(")")
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }

// Error reports an MPIABI function that returned a code other than
// MPI_SUCCESS. MPI's default error handler (MPI_ERRORS_ARE_FATAL) aborts
// the job on most errors before they can be returned: set l.ErrorsReturn
// on the communicator with CommSetErrhandler to get them as *Error.
type Error struct {
	Func string // e.g. "MPIABI_Send"
	Code int    // the MPI error code
	Text string // MPI_Error_string of Code, when the library provides it
}

// Error formats the function, the code and the library's text.
func (e *Error) Error() string {
	s := fmt.Sprintf("mpiabi: %s failed with MPI error code %d", e.Func, e.Code)
	if e.Text != "" {
		s += ": " + e.Text
	}
	return s
}

// LauncherError reports that the launcher started more (or fewer) ranks than
// the library's communicator contains: typically a wrapper built for one MPI
// started by the other MPI's mpirun, where every rank comes up alone.
type LauncherError struct {
	Var          string // launcher variable, e.g. "OMPI_COMM_WORLD_SIZE"
	LauncherSize int    // its value
	CommSize     int    // what Comm_size returned
	Launcher     string // which launcher sets Var
	Library      string // the version string's line naming the MPI under the wrapper (launch.ParseVersion)
	Path         string // the MPIABI library path
	Hint         string // which launcher and library to pair
}

// Error explains the mismatch and how to fix it.
func (e *LauncherError) Error() string {
	return fmt.Sprintf("mpiabi: launcher/library mismatch: %s=%d (set by %s) but the communicator of %s (%s) has size %d, so each rank came up alone; %s",
		e.Var, e.LauncherSize, e.Launcher, strconv.Quote(e.Path), e.Library, e.CommSize, e.Hint)
}
