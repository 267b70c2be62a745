//go:build !linux && (mpirt || mpicgo)

package mpi

// recordInitThread is a no-op where thread ids are not available.
func recordInitThread() {}

// OnInitThread reports that the MPI main thread is not known locally; the
// caller asks MPI_Is_thread_main instead.
func OnInitThread() (on, known bool) { return false, false }
