//go:build mpirt

package mpiabi_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/hataori/hataori-go/mpiabi"
)

// The examples need MPI, so they have no Output comment and go test only
// compiles them. The tests below are their Output check: built with -tags
// mpirt, the multi-rank harness runs them on 2 ranks under Open MPI and
// MPICH (MPI_RT_LIB naming the wrapper of each), captures what each rank
// prints and compares it with the output listed here. The examples that
// initialise and finalise MPI themselves, or abort the job, each get a job
// of their own.

// mpiExample is an example and what it prints on rank 0 and rank 1.
type mpiExample struct {
	name     string
	run      func()
	on0, on1 string
}

// wrapped is what ExampleLib_LibraryVersion prints under the launcher of
// this job.
func wrapped() string {
	if os.Getenv("OMPI_COMM_WORLD_SIZE") != "" {
		return "wraps Open MPI: start with Open MPI's mpirun\n"
	}
	return "wraps MPICH: start with mpiexec.mpich\n"
}

// examplesWithMPI run after mpitest.Init, in this order.
func examplesWithMPI() []mpiExample {
	both := func(name string, run func(), out string) mpiExample { return mpiExample{name, run, out, out} }
	return []mpiExample{
		both("ExampleLoad", ExampleLoad, "MPIABI major version 2 cached: true\n"),
		both("ExampleLib_LibraryVersion", ExampleLib_LibraryVersion, wrapped()),
		both("ExampleLib_Init", ExampleLib_Init, "MPI is up with 2 ranks\n"),
		both("ExampleLib_InitThread", ExampleLib_InitThread, "at least FUNNELED: true\n"),
		both("ExampleLib_Initialized", ExampleLib_Initialized, "initialised: true <nil>\n"),
		both("ExampleLib_Finalized", ExampleLib_Finalized, "finalised: false <nil>\n"),
		both("ExampleLib_QueryThread", ExampleLib_QueryThread, "other threads may run while the main thread calls MPI\n"),
		both("ExampleLib_IsThreadMain", ExampleLib_IsThreadMain, "main thread: true other thread: false\n"),
		{"ExampleLib_CommRank", ExampleLib_CommRank, "world rank 0 self rank 0\n", "world rank 1 self rank 0\n"},
		{"ExampleLib_CommSize", ExampleLib_CommSize, "2 ranks\n", ""},
		both("ExampleLib_CommDup", ExampleLib_CommDup, "private communicator of 2 ranks, distinct: true\n"),
		both("ExampleLib_CommFree", ExampleLib_CommFree, "handle reset to CommNull: true\n"),
		both("ExampleLib_CommSetErrhandler", ExampleLib_CommSetErrhandler, "MPIABI_Send failed, code true\n"),
		{"ExampleLib_Barrier", ExampleLib_Barrier, "every rank arrived; waited true\n", ""},
		{"ExampleLib_Bcast", ExampleLib_Bcast, "rank 0 params [0.25 0.5 1]\n", "rank 1 params [0.25 0.5 1]\n"},
		{"ExampleLib_Allreduce", ExampleLib_Allreduce, "rank 0 sum 3\n", "rank 1 sum 3\n"},
		{"ExampleLib_Recv", ExampleLib_Recv, "", "from rank 0 tag 5 [-1 2 -3]\n"},
		{"ExampleLib_GetCount", ExampleLib_GetCount, "", "5 bytes: \"short\"\n"},
		{"ExampleLib_Iprobe", ExampleLib_Iprobe, "rank 0 got \"done\" from rank 1\n", ""},
		{"ExampleLib_Isend", ExampleLib_Isend, "rank 0 sent itself 0\n", "rank 1 sent itself 10\n"},
		{"ExampleLib_Wait", ExampleLib_Wait, "rank 0 got the token of rank 1\n", "rank 1 got the token of rank 0\n"},
		both("ExampleLib_Wtime", ExampleLib_Wtime, "seconds are non-negative: true\n"),
		both("ExampleLib_Send", ExampleLib_Send, ""),
		// ExampleLib_Probe receives one message on rank 0; rank 1 sends it.
		{"ExampleLib_Probe", func() {
			lib, _ := mpiabi.Load()
			if rank, _ := lib.CommRank(lib.CommWorld); rank == 1 {
				msg := []byte("probe")
				if err := lib.Send(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, 0, 9, lib.CommWorld); err != nil {
					panic(err)
				}
				return
			}
			ExampleLib_Probe()
		}, "5 bytes from rank 1, tag 9\n", ""},
	}
}

// TestExamplesMPI runs the examples that need MPI initialised on 2 ranks
// and checks their output.
func TestExamplesMPI(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 60 * time.Second,
			Want: []string{"ExampleLib_Probe on rank 0: ok", "ExampleLib_Probe on rank 1: ok"}})
		return
	}
	rank, _ := mpitest.Init(t) // every MPI call stays on this goroutine
	for _, ex := range examplesWithMPI() {
		checkOutput(t, rank, ex)
	}
}

// TestExampleProgram runs the package example, which initialises and
// finalises MPI itself like a program, in a job of its own.
func TestExampleProgram(t *testing.T) {
	runProgram(t, "TestExampleProgram", mpiExample{"Example", Example, "rank 0 of 2 min -1\n", "rank 1 of 2 min -1\n"})
}

// TestExampleFinalize runs ExampleLib_Finalize, a program too.
func TestExampleFinalize(t *testing.T) {
	runProgram(t, "TestExampleFinalize",
		mpiExample{"ExampleLib_Finalize", ExampleLib_Finalize, "rank 0 finalised: true\n", "rank 1 finalised: true\n"})
}

// runProgram is a multi-rank test of an example that initialises
// and finalises MPI on its own, without mpitest.Init.
func runProgram(t *testing.T, test string, ex mpiExample) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 60 * time.Second, Test: test,
			Want: []string{ex.name + " on rank 0: ok", ex.name + " on rank 1: ok"}})
		return
	}
	// Like package main of a program: the example initialises MPI on this
	// thread, so keep the goroutine on it, and hand the thread back after
	// MPI_Finalize (a locked thread that exits then can crash the MPI).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rank, err := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_RANK") + os.Getenv("PMI_RANK")) // Open MPI or MPICH
	if err != nil {
		t.Fatalf("no rank in the environment: %v", err)
	}
	checkOutput(t, rank, ex)
}

// TestExampleAbort runs ExampleLib_Abort: rank 1 ends the job with code 3
// (which MPICH's launcher sometimes reports as 1).
func TestExampleAbort(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 60 * time.Second,
			ExitCodes: map[string]int{"openmpi": 3, "mpich": mpitest.AnyFailure},
			Want:      []string{"rank 1: input missing, aborting the job"}})
		return
	}
	mpitest.Init(t)
	ExampleLib_Abort()
	t.Fatal("ExampleLib_Abort returned")
}

// checkOutput runs ex on this goroutine and compares what it printed with
// what this rank must print.
func checkOutput(t *testing.T, rank int, ex mpiExample) {
	t.Helper()
	got := mpitest.CaptureStdout(t, ex.run)
	os.Stdout.WriteString(got)
	if want := map[int]string{0: ex.on0, 1: ex.on1}[rank]; got != want {
		t.Errorf("%s on rank %d printed %q, want %q", ex.name, rank, got, want)
		return
	}
	t.Logf("%s on rank %d: ok", ex.name, rank)
}
