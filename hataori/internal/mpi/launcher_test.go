package mpi_test

import (
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestLauncherMismatch starts the ranks under the other MPI's launcher:
// every rank comes up alone, and the launcher check must fail on every
// rank with a message naming the mismatch.
func TestLauncherMismatch(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{
			Ranks: 2, Timeout: jobTimeout, Mismatch: true,
			ExitCode: mpitest.AnyFailure,
			Want:     []string{"launcher check: mpi: CheckLauncher failed", "each rank came up alone"},
		})
		return
	}
	// Init runs the launcher check and fails the test with its message.
	rank, size := mpitest.Init(t)
	t.Errorf("launcher check passed under a mismatched launcher: rank %d of %d (%s)", rank, size, mpi.Backend())
}
