//go:build mpirt || mpicgo

package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestDataEntry shows that the data collectives share Pmap's local
// entry checks: a call from another goroutine fails on that rank alone with
// ErrNotMainThread before any MPI call (under hataoridebug any MPI call
// there would panic), and a data collective inside a Pmap callback is
// rejected as re-entrant on every rank that makes one.
func TestDataEntry(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2} {
			mpitest.Run(t, mpitest.Config{Ranks: n})
		}
		return
	}
	rank, size := mpitest.Init(t)
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	res := make(chan error)
	go func() {
		_, err := hataori.Broadcast(ctx, world, 0, hataori.Some(1))
		res <- err
	}()
	err = <-res
	var pe *hataori.CollectiveError
	if !errors.As(err, &pe) || pe.Rank != -1 || !errors.Is(err, hataori.KindPreflight) || !errors.Is(err, hataori.ErrNotMainThread) {
		t.Errorf("rank %d: Broadcast from another goroutine = %v, want a local preflight error wrapping ErrNotMainThread", rank, err)
	}
	if n := strings.Count(fmt.Sprint(err), "hataori:"); err != nil && n != 1 {
		t.Errorf("rank %d: %q says \"hataori:\" %d times, want once", rank, err, n)
	}

	// A communicator that is not one: a local preflight error, no MPI call.
	_, err = hataori.Broadcast(ctx, hataori.Comm{}, 0, hataori.Some(1))
	if !errors.As(err, &pe) || pe.Rank != -1 || !errors.Is(err, hataori.KindPreflight) || !errors.Is(err, hataori.ErrInvalidComm) {
		t.Errorf("rank %d: Broadcast on a zero Comm = %v, want a local preflight error wrapping ErrInvalidComm", rank, err)
	}

	items := hataori.None[[]int]()
	if rank == 0 {
		items = hataori.Some(make([]int, 2*size))
	}
	var nested, bad int
	_, err = hataori.Pmap(ctx, world, nil, hataori.Options{}, items, func(x int) (int, error) {
		nested++
		_, inner := hataori.Gather(ctx, world, 0, x)
		if !errors.Is(inner, hataori.KindPreflight) || !strings.Contains(inner.Error(), "already active") {
			bad++
			t.Errorf("rank %d: Gather inside a Pmap callback = %v, want a re-entrancy error", rank, inner)
		}
		return x, nil
	})
	if err != nil {
		t.Fatalf("rank %d: outer Pmap: %v", rank, err)
	}
	all, err := hataori.Gather(ctx, world, 0, nested)
	if err != nil {
		t.Fatalf("rank %d: Gather after the re-entry check: %v", rank, err)
	}
	if rank == 0 {
		total := 0
		for _, n := range all {
			total += n
		}
		if total != 2*size {
			t.Errorf("nested calls over all ranks = %d, want %d", total, 2*size)
		}
	}
	if bad != 0 {
		t.Errorf("rank %d: %d nested calls not rejected", rank, bad)
	}
}
