package main

import (
	"context"
	"testing"

	"github.com/hataori/hataori-go/internal/workspace"
	"github.com/hataori/hataori-go/lanes"
)

// TestChecksumIndependentOfLanes compares the lanes' checksum, for 1 and 3
// lanes, with a plain loop over one workspace.
func TestChecksumIndependentOfLanes(t *testing.T) {
	seeds := []uint64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3}
	ref, err := workspace.New(16)
	if err != nil {
		t.Fatal(err)
	}
	tops := make([]float64, len(seeds))
	for i, s := range seeds {
		if tops[i], err = ref.TopEigen(s); err != nil {
			t.Fatal(err)
		}
	}
	want := checksum(tops)
	for _, k := range []int{1, 3} {
		engines := make([]*workspace.Workspace, k)
		for i := range engines {
			if engines[i], err = workspace.New(16); err != nil {
				t.Fatal(err)
			}
		}
		l, err := lanes.New(engines)
		if err != nil {
			t.Fatal(err)
		}
		for run := range 2 {
			got, err := localChecksum(context.Background(), l, seeds)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%d lanes, run %d: checksum %v, want %v", k, run, got, want)
			}
		}
		items := 0
		for _, ws := range engines {
			items += ws.Items()
		}
		if items != 2*len(seeds) {
			t.Fatalf("%d lanes: workspaces computed %d items, want %d", k, items, 2*len(seeds))
		}
	}
}

func TestRunRejectsMPIWithoutBackend(t *testing.T) {
	if mpiMain != nil {
		t.Skip("built with an MPI backend")
	}
	if err := run(context.Background(), config{lanes: 1, items: 1, n: 4, runs: 1, mpi: true}); err == nil {
		t.Fatal("-mpi accepted without an MPI backend")
	}
}
