//go:build !mpirt && !mpicgo

package mpi

// OnInitThread reports that no MPI main thread is known: without a backend
// MPI is never initialised.
func OnInitThread() (on, known bool) { return false, false }
