package mpitest_test

import (
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestHarnessReportsRankFailure runs a rank body that fails on purpose:
// the job must end with a nonzero code and carry the rank's message.
func TestHarnessReportsRankFailure(t *testing.T) {
	if !mpitest.Child() {
		mpitest.ExpectExit(t, mpitest.Config{
			Ranks: 2, Timeout: 60 * time.Second,
			Want: []string{"deliberate failure on rank 1"},
		}, mpitest.AnyFailure)
		return
	}
	rank, _ := mpitest.Init(t)
	if rank == 1 {
		t.Errorf("deliberate failure on rank %d", rank)
	}
}

// TestHarnessRanks checks that every rank sees the job's size and a
// distinct rank, reported through Init.
func TestHarnessRanks(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 3, Timeout: 60 * time.Second,
			Want: []string{"rank 0 of 3", "rank 1 of 3", "rank 2 of 3"}})
		return
	}
	rank, size := mpitest.Init(t)
	t.Logf("rank %d of %d", rank, size)
	if size != 3 || rank < 0 || rank >= size {
		t.Fatalf("rank %d of %d, want size 3", rank, size)
	}
}

// TestHarnessAbortCode checks that an MPI_Abort code reaches the parent
// through either launcher, as ExpectExit needs.
func TestHarnessAbortCode(t *testing.T) {
	if !mpitest.Child() {
		mpitest.ExpectExit(t, mpitest.Config{Ranks: 2, Timeout: 60 * time.Second}, 70)
		return
	}
	rank, _ := mpitest.Init(t)
	if rank == 1 {
		mpi.Abort(mpi.World(), 70)
	}
	time.Sleep(30 * time.Second) // rank 0 waits to be killed by the abort
}
