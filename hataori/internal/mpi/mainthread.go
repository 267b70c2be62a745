//go:build linux && (mpirt || mpicgo)

package mpi

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// initTID is the OS thread id of the thread on which InitThread
// succeeded, or 0 when MPI was initialised by someone else (or not yet).
var initTID atomic.Int64

// recordInitThread remembers the calling thread as the MPI main thread.
func recordInitThread() { initTID.Store(int64(unix.Gettid())) }

// OnInitThread reports, without calling MPI, whether the calling OS thread
// is the one that initialised MPI through this package. known is false when
// MPI was initialised elsewhere (mpi4py, a C library, the user through
// package mpiabi); the caller then has to ask MPI_Is_thread_main.
func OnInitThread() (on, known bool) {
	tid := initTID.Load()
	if tid == 0 {
		return false, false
	}
	return int64(unix.Gettid()) == tid, true
}
