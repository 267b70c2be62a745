//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapInlineMPI runs MPI-only calls at MPI_THREAD_SINGLE, where the
// coordinator runs the root's (and every rank's) callbacks itself between
// messages: Pmap with automatic and fixed batches, a failing item under
// both policies, and PmapStream in both orders, a small window included;
// a call with a domain fails its preflight with ErrThreadSupport.
func TestPmapInlineMPI(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapInlineMPI")
		return
	}
	runtime.LockOSThread()
	provided, err := mpi.InitThread(mpi.ThreadSingle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after mpitest's own cleanup (which leaves MPI to us)
		if err := mpi.Finalize(); err != nil {
			t.Error(err)
		}
		// Hand the thread back (locked here and by mpitest.Init): a
		// thread that exits after MPI_Finalize can crash in the MPI
		// library's thread-exit handlers.
		runtime.UnlockOSThread()
		runtime.UnlockOSThread()
	})
	e := newRankEnv(t)
	if provided != mpi.ThreadSingle {
		t.Skipf("MPI provides %v for MPI_THREAD_SINGLE", provided)
	}
	ctx := context.Background()
	want := make([]int, 60)
	for i := range want {
		want[i] = i * i
	}
	for _, batch := range []int{0, 3} {
		out, err := Pmap(ctx, e.world, nil, Options{BatchSize: batch}, e.items(60), func(x int) (int, error) { return x * x, nil })
		if err != nil || (e.rank == 0 && !slices.Equal(out, want)) {
			t.Errorf("batch %d: %v %v", batch, out, err)
		}
		_, err = Pmap(ctx, e.world, nil, Options{BatchSize: batch}, e.items(60), func(x int) (int, error) {
			if x == 23 {
				return 0, fmt.Errorf("item %d failed", x)
			}
			return x, nil
		})
		if pe := e.sameError(fmt.Sprint("inline FailFast batch ", batch), err, KindUser); pe.Index != 23 {
			t.Errorf("batch %d: %v, want item 23", batch, err)
		}
	}
	for _, c := range []struct {
		window    int
		unordered bool
	}{{0, false}, {4, false}, {4, true}} {
		what := fmt.Sprintf("inline stream window=%d unordered=%v", c.window, c.unordered)
		p := newStreamProbe(100, max(c.window, 1))
		if c.window == 0 {
			p.window = DefaultWindow
		}
		if err := e.streamOn(ctx, execMode{name: "mpi-only"}, Options{Window: c.window, Unordered: c.unordered}, p, square); err != nil {
			t.Errorf("%s: %v", what, err)
		}
		e.checkStream(what, p, seqUpTo(100), c.unordered)
	}
	_, err = Pmap(ctx, e.world, e.dom, Options{}, e.items(4), func(x int) (int, error) { return x, nil })
	if pe := e.sameError("a domain at MPI_THREAD_SINGLE", err, KindPreflight); !errors.Is(pe, ErrThreadSupport) {
		t.Errorf("a domain at MPI_THREAD_SINGLE: %v, want ErrThreadSupport", err)
	}
}
