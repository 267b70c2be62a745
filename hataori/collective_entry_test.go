//go:build !mpirt && !mpicgo

package hataori

import (
	"context"
	"errors"
	"testing"
)

// Without an MPI backend every collective call fails locally with ErrNoMPI
// (not, say, a thread check that could not ask MPI).
func TestCollectivesWithoutMPI(t *testing.T) {
	ctx := context.Background()
	var c Comm
	checks := map[string]error{}
	_, checks["Pmap"] = Pmap(ctx, c, nil, Options{}, Some([]int{1}), func(x int) (int, error) { return x, nil })
	_, checks["Broadcast"] = Broadcast(ctx, c, 0, Some(1))
	_, checks["Scatter"] = Scatter(ctx, c, 0, Some([]int{1}))
	_, checks["Gather"] = Gather(ctx, c, 0, 1)
	for name, err := range checks {
		if !errors.Is(err, ErrNoMPI) {
			t.Errorf("%s without MPI: %v, want an error matching ErrNoMPI", name, err)
		}
	}
	var pe *PmapError
	if !errors.As(checks["Pmap"], &pe) || pe.Kind != KindPreflight || pe.Rank != -1 {
		t.Errorf("Pmap without MPI: %v, want a local KindPreflight *PmapError", checks["Pmap"])
	}
	var le *CollectiveError
	if !errors.As(checks["Gather"], &le) || le.Kind != KindPreflight || le.Rank != -1 {
		t.Errorf("Gather without MPI: %v, want a local preflight *CollectiveError", checks["Gather"])
	}
	if collectiveActive.Load() {
		t.Error("a failed entry left the re-entrancy guard set")
	}
}
