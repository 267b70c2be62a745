package mpitest

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// owned records that Init initialised MPI in this process.
var owned bool

// Init is called by a rank's test body. It locks the calling goroutine to
// its OS thread for the rest of the process, initialises MPI on it with
// MPI_THREAD_FUNNELED (unless MPI is already initialised on this thread),
// checks that the launcher and the library agree on the world size, and
// returns the rank and size of the world communicator. It registers a
// cleanup that aborts the whole job when the test has failed (so no peer
// waits forever) and otherwise finalises MPI on this thread.
func Init(t testing.TB) (rank, size int) {
	t.Helper()
	if !Child() {
		t.Fatal("mpitest.Init called outside a rank (use mpitest.Run in the parent)")
	}
	runtime.LockOSThread() // never unlocked: this goroutine is the MPI main thread
	ok, err := mpi.Initialized()
	if err != nil {
		t.Fatalf("MPI_Initialized: %v", err)
	}
	if ok {
		main, err := mpi.IsThreadMain()
		if err != nil || !main {
			t.Fatalf("MPI is already initialised on another thread (main=%v, err=%v): run one multi-rank test per job", main, err)
		}
	} else {
		provided, err := mpi.InitThread(mpi.ThreadFunneled)
		if err != nil {
			t.Fatalf("MPI_Init_thread: %v", err)
		}
		owned = true
		if provided < mpi.ThreadFunneled {
			t.Fatalf("MPI provides %v, Hataori needs at least %v", provided, mpi.ThreadFunneled)
		}
	}
	t.Cleanup(func() { finish(t) })
	world := mpi.World()
	if err := mpi.CheckLauncher(world); err != nil {
		t.Fatalf("launcher check: %v", err)
	}
	if rank, err = mpi.Rank(world); err != nil {
		t.Fatalf("MPI_Comm_rank: %v", err)
	}
	if size, err = mpi.Size(world); err != nil {
		t.Fatalf("MPI_Comm_size: %v", err)
	}
	return rank, size
}

// finish ends a rank's MPI use at the end of its test.
func finish(t testing.TB) {
	if done, err := mpi.Finalized(); err != nil || done {
		return
	}
	if t.Failed() {
		fmt.Fprintf(os.Stderr, "mpitest: %s failed on this rank: aborting the job (MPI_Abort 1)\n", t.Name())
		mpi.Abort(mpi.World(), 1)
	}
	if owned {
		if err := mpi.Finalize(); err != nil {
			fmt.Fprintf(os.Stderr, "mpitest: MPI_Finalize: %v\n", err)
		}
		// Hand the thread back instead of letting it exit with the test
		// goroutine: a thread that exits after MPI_Finalize can crash in
		// the MPI library's thread-exit handlers (seen with Open MPI).
		runtime.UnlockOSThread()
	}
}

// Main runs the tests of m and exits. In a rank it first finalises MPI if
// Init initialised it and no test finalised it. Use it from TestMain:
//
//	func TestMain(m *testing.M) { mpitest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if Child() && owned {
		if done, err := mpi.Finalized(); err == nil && !done {
			_ = mpi.Finalize()
		}
	}
	os.Exit(code)
}
