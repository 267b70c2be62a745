package hataori

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// ThreadLevel is an MPI thread-support level.
type ThreadLevel int

// The MPI thread-support levels, in increasing order. Hataori's collective
// calls need at least ThreadFunneled when the callbacks run on other
// goroutines (always, except for an MPI-only Pmap at ThreadSingle), since
// only the calling goroutine makes MPI calls.
const (
	ThreadSingle ThreadLevel = iota
	ThreadFunneled
	ThreadSerialized
	ThreadMultiple
)

// The transport normalises the levels to the same values (a compile-time
// check: any difference is an invalid array index).
var (
	_ = [1]struct{}{}[ThreadSingle-ThreadLevel(mpi.ThreadSingle)]
	_ = [1]struct{}{}[ThreadFunneled-ThreadLevel(mpi.ThreadFunneled)]
	_ = [1]struct{}{}[ThreadSerialized-ThreadLevel(mpi.ThreadSerialized)]
	_ = [1]struct{}{}[ThreadMultiple-ThreadLevel(mpi.ThreadMultiple)]
)

// String returns the MPI name of the level.
func (l ThreadLevel) String() string { return mpi.ThreadLevel(l).String() }

// ownership records whether Hataori initialised MPI in this process.
var ownership struct {
	sync.Mutex
	owned bool
}

// InitThread initialises MPI for a program that wants Hataori to do it,
// asking for thread support level and returning the level MPI provides
// (which may be lower: check it). If MPI is already initialised (by the
// program, mpi4py or another library), InitThread does not initialise it
// again, returns the level in force, and leaves its finalisation to whoever
// initialised it.
//
// The goroutine that calls InitThread becomes the MPI main thread and must
// make every later MPI call, Hataori's included. Go moves goroutines
// between OS threads, so InitThread locks the calling goroutine to its OS
// thread (runtime.LockOSThread) for the rest of the process: call
// InitThread, the collective calls and [Finalize] from the same goroutine,
// normally main's. A program may still lock its main goroutine to the
// process's main thread before main runs, which some MPI libraries and
// tools prefer:
//
//	func init() { runtime.LockOSThread() }
//
// When MPI was already initialised elsewhere, InitThread takes no lock:
// the program must then make the collective calls on the thread that
// initialised MPI (they check that they are), normally by locking its main
// goroutine in init as above.
//
// After initialising, InitThread sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD, so that an MPI error on [World] is returned as an
// *[MPIError] instead of aborting the job (it leaves the error handler alone
// when MPI was already initialised), and checks that the launcher started
// the number of processes MPI sees (a program started by the other MPI's
// launcher comes up as a set of single-process jobs), returning an error
// explaining the mismatch if not. It then makes World's private duplicate
// for the collective calls (an MPI_Comm_dup; see [Comm]), so that the
// first collective call needs none.
func InitThread(level ThreadLevel) (ThreadLevel, error) {
	if level < ThreadSingle || level > ThreadMultiple {
		return ThreadSingle, fmt.Errorf("%w: %d (want ThreadSingle..ThreadMultiple)", ErrThreadLevel, int(level))
	}
	ok, err := mpi.Initialized()
	if err != nil {
		return ThreadSingle, mpiErr(err)
	}
	if ok {
		got, err := mpi.QueryThread()
		return ThreadLevel(got), mpiErr(err)
	}
	// Never unlocked once MPI is up: this goroutine is the MPI main thread
	// from now on, whether or not the program locked it in init.
	runtime.LockOSThread()
	got, err := mpi.InitThread(mpi.ThreadLevel(level))
	if err != nil {
		runtime.UnlockOSThread()
		return ThreadSingle, mpiErr(err)
	}
	ownership.Lock()
	ownership.owned = true
	ownership.Unlock()
	if err := mpi.SetErrorsReturn(mpi.World()); err != nil {
		return ThreadLevel(got), mpiErr(err)
	}
	if err := mpi.CheckLauncher(mpi.World()); err != nil {
		return ThreadLevel(got), mpiErr(err)
	}
	// World's private duplicate now, while every rank is in a collective
	// call anyway, rather than in the first collective call.
	return ThreadLevel(got), mpiErr(coll.Prime(mpi.World(), &worldPriv))
}

// Initialized reports whether MPI is initialised and not yet finalised
// ([ErrNoMPI] without an MPI backend).
func Initialized() (bool, error) {
	ok, err := mpi.Initialized()
	if err != nil || !ok {
		return false, mpiErr(err)
	}
	done, err := mpi.Finalized()
	return !done, mpiErr(err)
}

// Finalize frees the private duplicates Hataori's collective calls kept
// (see [Comm]) and finalises MPI if [InitThread] initialised it, from the
// MPI main thread, on every rank (both steps are collective); after it no
// MPI call is possible. When MPI was initialised by someone else (they
// finalise it) it only frees those duplicates, so a program may call it
// before the owner's MPI_Finalize (which otherwise reclaims them). It
// does nothing and returns nil when MPI is not initialised or already
// finalised. It returns [ErrNoMPI] without an MPI backend.
func Finalize() error {
	if mpi.Backend() == "none" {
		return ErrNoMPI
	}
	ownership.Lock()
	defer ownership.Unlock()
	if !ownership.owned && !coll.AnyKept() {
		return nil // no MPI call, as before duplicates were kept
	}
	if up, err := mpi.Initialized(); err != nil || !up {
		return mpiErr(err)
	}
	done, err := mpi.Finalized()
	if err != nil {
		return mpiErr(err)
	}
	if done {
		return nil
	}
	if err := coll.FreeKept(); err != nil {
		return mpiErr(err)
	}
	if !ownership.owned {
		return nil
	}
	return mpiErr(mpi.Finalize())
}
