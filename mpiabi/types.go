package mpiabi

import "unsafe"

// EnvVar is the environment variable that Load reads: the path (or library
// name) of an MPIABI 2.x library such as an MPIwrapper build or the wrapper
// built from this repository's wrapper/ directory.
const EnvVar = "MPI_RT_LIB"

// Comm is an MPIABI communicator handle: the native handle of the wrapped MPI
// widened to uintptr (an object address under Open MPI, an int under MPICH).
// The integer mpi4py reports for a communicator is a valid Comm when mpi4py
// and the library share one native MPI in the same process.
type Comm uintptr

// Datatype is an MPIABI datatype handle (see Comm for the representation).
type Datatype uintptr

// Op is an MPIABI reduction operation handle (see Comm for the representation).
type Op uintptr

// Errhandler is an MPIABI error handler handle (see Comm for the
// representation).
type Errhandler uintptr

// Status is the 40-byte MPIABI status: a 24-byte copy of the wrapped MPI's
// native status (kept intact so that GetCount can hand it back), then the
// source, tag and error fields at offsets 24, 28 and 32.
//
// A Status may be reused across calls; reusing one keeps Recv, Probe and
// Iprobe free of allocations.
type Status struct {
	native [3]uint64
	// Source is the rank the message came from.
	Source int32
	// Tag is the message tag.
	Tag int32
	// Error is the error code stored by the MPI library (rarely set).
	Error int32
	_     int32
}

// Compile-time checks of the layout required by MPIABI 2.x.
var (
	_ [40 - unsafe.Sizeof(Status{})]struct{}
	_ [unsafe.Sizeof(Status{}) - 40]struct{}
	_ [24 - unsafe.Offsetof(Status{}.Source)]struct{}
	_ [unsafe.Offsetof(Status{}.Source) - 24]struct{}
	_ [32 - unsafe.Offsetof(Status{}.Error)]struct{}
	_ [unsafe.Offsetof(Status{}.Error) - 32]struct{}
)

// Lib is an opened MPIABI library. Its exported fields hold the library's
// version and the constants read from it; they are set by Open and must not
// be changed. Every method calls the corresponding MPIABI_* function and,
// like MPI itself, must be called from the thread the library expects (see
// the package documentation).
type Lib struct {
	// Path is the path the library was opened with.
	Path string
	// VersionMajor, VersionMinor and VersionPatch are the library's
	// mpiabi_version_* values (major is always 2).
	VersionMajor, VersionMinor, VersionPatch int
	// Build is the library's mpiwrapper_version string ("" when absent).
	Build string

	// CommWorld, CommSelf and CommNull are the predefined communicators.
	CommWorld, CommSelf, CommNull Comm

	// Byte, Char, Int, Int32, Int64, Uint64, Double and Float are the
	// predefined datatypes MPI_BYTE, MPI_CHAR, MPI_INT, MPI_INT32_T,
	// MPI_INT64_T, MPI_UINT64_T, MPI_DOUBLE and MPI_FLOAT.
	Byte, Char, Int, Int32, Int64, Uint64, Double, Float Datatype

	// Min, Max and Sum are the predefined reduction operations.
	Min, Max, Sum Op

	// AnySource, AnyTag and ProcNull are the wildcard and null ranks/tags;
	// their values differ between the wrapped MPIs.
	AnySource, AnyTag, ProcNull int

	// StatusIgnore is the library's MPI_STATUS_IGNORE value (NULL under
	// Open MPI, 1 under MPICH). Methods taking a nil *Status pass it.
	StatusIgnore uintptr

	// ThreadSingle, ThreadFunneled, ThreadSerialized and ThreadMultiple are
	// the library's thread-support levels.
	ThreadSingle, ThreadFunneled, ThreadSerialized, ThreadMultiple int

	// Success is MPI_SUCCESS.
	Success int

	// ErrorsReturn is the predefined error handler MPI_ERRORS_RETURN: set
	// it on a communicator with CommSetErrhandler to have MPI errors on it
	// returned (as *Error) instead of aborting the job, MPI's default.
	ErrorsReturn Errhandler

	// RequestNull is MPI_REQUEST_NULL (0 if the library does not export
	// MPIABI_REQUEST_NULL).
	RequestNull Request

	handle uintptr
	fn     funcs
	spare  spareCell
}
