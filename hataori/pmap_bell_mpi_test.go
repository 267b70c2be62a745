//go:build (mpirt || mpicgo) && hataoridebug

package hataori

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapBell checks the root's bell (pmap_bell.go) with every rank on
// the root's host: each other rank opens it from its first TASK and rings
// it, and the root waits on it once every rank does, MPI-only and hybrid,
// at automatic and fixed sizes, with every result in order. Every item
// sleeps 1 ms, so that the first deal gives every rank a TASK (the root's
// own slots cannot take the input first) and the root's coordinator has
// rounds with nothing to do between the RESULTs; the root's callbacks wait
// until its coordinator has waited on the bell (the event the verdict
// checks, forced rather than left to the schedule). Launched again with
// HATAORI_BELL=0 (the root makes no bell): no rank rings and the root
// never waits on one.
func TestPmapBell(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 2 * time.Minute})
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 2 * time.Minute, Env: []string{"HATAORI_BELL=0"}})
		}
		return
	}
	e := newRankEnv(t)
	if runtime.GOOS != "linux" {
		t.Skip("the bell needs Linux")
	}
	off := os.Getenv("HATAORI_BELL") == "0"
	f := func(x int) (int, error) {
		time.Sleep(time.Millisecond)
		return 5 * x, nil
	}
	for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
		for _, batch := range []int{0, 1} {
			what := fmt.Sprintf("%s batch=%d off=%v", m.name, batch, off)
			waits, rings := debugBellWaits.Load(), debugBellRings.Load()
			// The root's callbacks first wait until its coordinator has
			// waited on the bell (at most gateWait, else the test fails):
			// that needs every other rank to ring, after its first batch,
			// and on a shared node one rank's thread can wait for a core
			// for most of a short call, while the root's slots would run
			// the rest of the input.
			hold := func() {}
			if e.rank == 0 && !off {
				hold = e.rootGate(func() bool { return debugBellWaits.Load() > waits },
					func() string { return what + ": the root's coordinator never waited on its bell" })
			}
			held := func(x int) (int, error) {
				hold()
				return f(x)
			}
			n := 40 * e.size
			out, err := Pmap(context.Background(), e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, e.items(n), held)
			if err != nil {
				t.Fatalf("%s: rank %d: %v", what, e.rank, err)
			}
			waits, rings = debugBellWaits.Load()-waits, debugBellRings.Load()-rings
			if e.rank == 0 {
				for i, v := range out {
					if v != 5*i {
						t.Fatalf("%s: out[%d] = %d, want %d", what, i, v, 5*i)
					}
				}
				switch {
				case off && waits != 0:
					t.Errorf("%s: the root waited %d times on a bell with HATAORI_BELL=0", what, waits)
				case !off && waits == 0:
					t.Errorf("%s: the root never waited on its bell", what)
				}
			} else {
				switch {
				case off && rings != 0:
					t.Errorf("%s: rank %d rang a bell %d times with HATAORI_BELL=0", what, e.rank, rings)
				case !off && rings == 0:
					t.Errorf("%s: rank %d never rang the root's bell", what, e.rank)
				}
			}
			if !e.same(0) {
				t.Fatal("ranks disagree")
			}
		}
	}
}
