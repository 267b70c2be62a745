//go:build hataoridebug

package mpi_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// checkDebugAssert checks that, under hataoridebug, an MPI call from a
// thread other than the MPI main thread panics before reaching MPI.
func checkDebugAssert(t *testing.T) {
	t.Helper()
	ch := make(chan string)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer func() { ch <- fmt.Sprint(recover()) }()
		_, _ = mpi.Rank(mpi.World())
	}()
	if msg := <-ch; !strings.Contains(msg, "MPI_Comm_rank called off the MPI main thread") {
		t.Fatalf("Rank off the main thread: recovered %q, want the hataoridebug assertion", msg)
	}
}
