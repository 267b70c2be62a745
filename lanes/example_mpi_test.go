//go:build mpirt || mpicgo

package lanes_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestExamplesMPI is the Output check of ExamplePmapLanes, which needs
// mpirun and so has no Output comment: it runs the example on 2 ranks under
// the multi-rank harness (every MPI it can launch), captures what each rank
// prints and compares it with the output below: the root prints the
// results, the other rank nothing.
func TestExamplesMPI(t *testing.T) {
	const root = "[EVERY RANK COMPUTES]\n"
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 60 * time.Second,
			Want: []string{strings.TrimSpace(root), "ExamplePmapLanes on rank 0: ok", "ExamplePmapLanes on rank 1: ok"}})
		return
	}
	rank, _ := mpitest.Init(t) // every MPI call stays on this goroutine
	got := mpitest.CaptureStdout(t, ExamplePmapLanes)
	os.Stdout.WriteString(got)
	want := map[int]string{0: root, 1: ""}[rank]
	if got != want {
		t.Fatalf("ExamplePmapLanes on rank %d printed %q, want %q", rank, got, want)
	}
	t.Logf("ExamplePmapLanes on rank %d: ok", rank)
}
