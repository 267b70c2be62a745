// Package mpi is Hataori's private MPI transport: one small Go API with
// three implementations chosen by build tag.
//
//   - mpirt: the run-time backend, delegating to package mpiabi, which opens
//     the MPIABI library named by MPI_RT_LIB with purego (CGO_ENABLED=0 works).
//   - mpicgo: the cgo backend, linked against the system MPI; build with
//     CC=mpicc (Open MPI) or CC=mpicc.mpich (MPICH).
//   - neither: every call returns ErrNoBackend and the binary contains no
//     MPI code.
//
// Setting both tags is a compile error (see conflict.go).
//
// Every function except IsThreadMain, Initialized, Finalized, Backend,
// LinkedMPI and Load must be called from the MPI main thread: the goroutine
// that initialised MPI, locked to its OS thread with runtime.LockOSThread.
// Under the build tag hataoridebug every such call first asks MPI whether
// the caller is the main thread and panics with a clear message if not.
//
// Handles are the backend's native handle widened to uintptr (an Open MPI
// object address, or an MPICH int), so a handle integer obtained from
// mpi4py or another library sharing the same MPI is valid. Thread levels
// are normalised to ThreadSingle..ThreadMultiple (0..3) whatever the
// library's own constants are.
package mpi
