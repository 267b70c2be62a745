//go:build mpirt || mpicgo

package hataori_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// The examples that need MPI cannot run under plain go test: they have no
// Output comment, so go test only compiles them. This test is their Output
// check. It runs every one of them, in one job of 2 ranks under each MPI
// the harness can launch, captures what each prints on each rank, and
// compares it with the output below; the parent also checks that the job's
// output contains the root's lines. An Example function is an ordinary
// function, so the code that runs is exactly the code the documentation
// shows. (Under the harness mpitest.Init has already initialised MPI, so
// the examples' InitThread only reports the level in force and their
// Finalize does nothing.)

// mpiExample is an example that needs MPI and what it prints on rank 0
// and rank 1 of a 2-rank job.
type mpiExample struct {
	name     string
	run      func()
	on0, on1 string
}

// mpiExamples lists every MPI example of the package, in the order they run.
func mpiExamples() []mpiExample {
	b := hataori.Backend()
	both := func(name string, run func(), out string) mpiExample { return mpiExample{name, run, out, out} }
	return []mpiExample{
		{"ExampleInitThread", ExampleInitThread, "rank 0 of 2 (" + b + " backend)\n", "rank 1 of 2 (" + b + " backend)\n"},
		both("ExampleFinalize", ExampleFinalize, "again: <nil>\n"),
		both("ExampleInitialized", ExampleInitialized, "MPI is initialised\n"),
		both("ExampleBackend", ExampleBackend, "backend "+b+"\n"),
		both("ExampleWorld", ExampleWorld, "world of 2 processes\n"),
		{"ExampleComm_Rank", ExampleComm_Rank, "rank 0 is the usual root\n", ""},
		{"ExampleComm_Size", ExampleComm_Size, "", "rank 1 is the last of 2\n"},
		{"ExampleComm_Send", ExampleComm_Send, "", "got \"ping\"\n"},
		{"ExampleComm_Recv", ExampleComm_Recv, "rank 0 got \"hello from rank 1\"\n", ""},
		{"ExampleComm_Barrier", ExampleComm_Barrier, "every rank reached the barrier\n", ""},
		{"ExampleComm_Dup", ExampleComm_Dup, "a private communicator of 2 ranks\n", ""},
		both("ExampleComm_Free", ExampleComm_Free, "after Free: true\nFree(world): true\n"),
		both("ExampleComm_Handle", ExampleComm_Handle, "same handle: true\n"),
		both("ExampleCommFromHandle", ExampleCommFromHandle, "borrowed communicator of 2 ranks; Free refused: true\n"),
		{"ExampleMPIError", ExampleMPIError, "", "MPI_Recv failed: true\n"},
		{"ExampleBroadcast", ExampleBroadcast, "rank 0 has [0.5 1.5 2.5]\n", "rank 1 has [0.5 1.5 2.5]\n"},
		{"ExampleScatter", ExampleScatter, "lengths [6 6]\n", ""},
		{"ExampleGather", ExampleGather, "gathered [r0 r1]\n", ""},
		both("ExampleGather_error", ExampleGather_error, "Gather preflight 0 root 99 out of range [0, 2)\n"),
		{"ExampleCollectiveError", ExampleCollectiveError,
			"rank 0: Scatter preflight error reported by rank 0\n", "rank 1: Scatter preflight error reported by rank 0\n"},
		{"ExampleBulk", ExampleBulk, "rank 0 temperatures [21.5 22 19.75]\n", "rank 1 temperatures [21.5 22 19.75]\n"},
		{"ExamplePmap", ExamplePmap, "[ALPHA BETA GAMMA DELTA]\n", ""},
		{"ExamplePmap_error", ExamplePmap_error,
			"rank 0: user error: 3 is a multiple of 3\n", "rank 1: user error: 3 is a multiple of 3\n"},
		{"ExampleCallStats", ExampleCallStats, "2 ranks ran 100 items in 10 batches\n", ""},
		{"ExamplePmapStream", ExamplePmapStream, "[1 4 9 16 25 36 49 64 81 100] true\n", ""},
	}
}

// TestExamplesMPI runs the MPI examples on 2 ranks and checks their output.
func TestExamplesMPI(t *testing.T) {
	if !mpitest.Child() {
		var want []string
		for _, ex := range mpiExamples() {
			want = append(want, ex.name+" on rank 0: ok")
			if ex.on0 != "" {
				want = append(want, strings.Split(strings.TrimSpace(ex.on0), "\n")...)
			}
		}
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 90 * time.Second, Want: want})
		return
	}
	rank, _ := mpitest.Init(t) // every MPI call stays on this goroutine
	for _, ex := range mpiExamples() {
		got := mpitest.CaptureStdout(t, ex.run)
		fmt.Print(got) // for the parent's Want lines and the log
		want := map[int]string{0: ex.on0, 1: ex.on1}[rank]
		if got != want {
			t.Errorf("%s on rank %d printed\n%s\nwant\n%s", ex.name, rank, got, want)
			continue
		}
		t.Logf("%s on rank %d: ok", ex.name, rank)
	}
}
