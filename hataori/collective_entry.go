package hataori

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// collectiveActive is the re-entrancy guard of the collective calls (Pmap,
// lanes.PmapLanes, Broadcast, Scatter, Gather): only one may be active in a process,
// since all of them run on the one MPI main thread.
var collectiveActive atomic.Bool

// errReentrant is the local cause of a re-entrant collective call.
var errReentrant = fmt.Errorf("a collective call (Pmap, Broadcast, Scatter or Gather) is already active in this process")

// enterCollective runs the local entry checks every collective call makes
// before any MPI call that could involve another rank: an MPI backend in
// this build (ErrNoMPI), no other collective
// call active (errReentrant), not on a domain worker (ErrWorkerEntry), and
// on the MPI main thread (ErrNotMainThread). On success the goroutine stays
// locked to its thread, with a fine timer slack (Linux: 1 µs, so that the
// short back-off sleeps of the call's polling loops are not stretched by
// the kernel's default 50 µs), until exit is called, and the entry bound of
// call op runs (beginEntry) until every rank has entered.
func enterCollective(op string) (exit func(), err error) {
	if mpi.Backend() == "none" {
		return nil, ErrNoMPI
	}
	if !collectiveActive.CompareAndSwap(false, true) {
		return nil, errReentrant
	}
	if onWorker() {
		collectiveActive.Store(false)
		return nil, ErrWorkerEntry
	}
	// Keep the goroutine on its thread for the whole call, whatever the
	// caller did: the MPI main thread must not change under us.
	runtime.LockOSThread()
	if err := checkMainThread(); err != nil {
		runtime.UnlockOSThread()
		collectiveActive.Store(false)
		return nil, err
	}
	undoSlack := fineTimerSlack()
	beginEntry(op)
	return func() {
		entered()
		undoSlack()
		runtime.UnlockOSThread()
		collectiveActive.Store(false)
	}, nil
}

// checkMainThread fails when the calling thread is not the MPI main thread.
// When MPI was initialised through Hataori (InitThread), the answer comes
// from the recorded thread id, with no MPI call at all; when someone else
// initialised MPI (mpi4py, a C library), it asks MPI_Is_thread_main, a local
// query that involves no other rank.
func checkMainThread() error {
	if on, known := mpi.OnInitThread(); known {
		if !on {
			return fmt.Errorf("%w: %s", ErrNotMainThread, mainThreadFix)
		}
		return nil
	}
	// MPI_Is_thread_main before MPI_Init aborts the process (Open MPI), so
	// ask first whether MPI is up.
	if up, err := mpi.Initialized(); err != nil || !up {
		if err == nil {
			err = ErrNotInitialized
		}
		return fmt.Errorf("%w: %w", ErrNotMainThread, err)
	}
	main, err := mpi.IsThreadMain()
	if err != nil {
		return fmt.Errorf("%w: MPI_Is_thread_main: %w", ErrNotMainThread, err)
	}
	if !main {
		return fmt.Errorf("%w: %s", ErrNotMainThread, mainThreadFix)
	}
	return nil
}

// mainThreadFix says how to make the collective calls on the MPI main
// thread.
const mainThreadFix = "make the collective calls from the goroutine that initialised MPI, normally main's " +
	"(hataori.InitThread locks its caller to its thread; when MPI is initialised elsewhere, " +
	"call runtime.LockOSThread() in an init function of package main and make the calls from main)"
