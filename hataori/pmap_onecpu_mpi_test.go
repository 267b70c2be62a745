//go:build (mpirt || mpicgo) && hataoridebug

package hataori

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapOneCPU runs Pmap on two ranks bound to one core each (Open MPI's
// default for two ranks; MPICH's -bind-to core), where the coordinators
// wait as docs/ARCHITECTURE.md "Waiting on a shared core" says: it checks
// by the debug counters that the root timed its sleeps by due RESULTs
// (with and without prefetch: a prefetched TASK is predicted behind the
// running one) and that the remote rank's slot or coordinator waited on
// their kicks (without prefetch; with it, not), and that every result came
// back in order, MPI-only and with a one-worker domain, with and without
// prefetch.
func TestPmapOneCPU(t *testing.T) {
	if !mpitest.Child() {
		// The due RESULTs time the root's sleeps only while some rank
		// does not ring its bell (pmap_bell.go): here none does.
		t.Setenv("HATAORI_BELL", "0")
		t.Setenv(mpitest.OpenMPIArgsEnv, strings.TrimSpace(os.Getenv(mpitest.OpenMPIArgsEnv)+" --bind-to core"))
		t.Setenv(mpitest.MPICHArgsEnv, strings.TrimSpace(os.Getenv(mpitest.MPICHArgsEnv)+" -bind-to core"))
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 2 * time.Minute})
		return
	}
	e := newRankEnv(t)
	if n := len(allowedCPUs()); n != 1 {
		t.Fatalf("rank %d may use %d CPUs, want 1 (the job binds each rank to a core)", e.rank, n)
	}
	dom, err := NewLocalDomain()
	if err != nil {
		t.Fatal(err)
	}
	defer dom.Close()
	busy := func(x int) (int, error) {
		// About 50 µs of work, so that the remote rank takes part.
		end := time.Now().Add(50 * time.Microsecond)
		for time.Now().Before(end) {
		}
		return 3 * x, nil
	}
	// BatchSize 1 where the waits are asserted: automatic sizes turn
	// prefetch on by themselves once it pays, after which the due
	// RESULTs and kicks may no longer be waited on; the automatic cases
	// check the results only.
	for _, c := range []struct {
		name     string
		dom      *Domain
		prefetch bool
		batch    int
	}{{"mpi-only", nil, false, 1}, {"hybrid", dom, false, 1}, {"mpi-only prefetch", nil, true, 1}, {"mpi-only auto", nil, false, 0}, {"hybrid auto", dom, false, 0}} {
		due0, kick0 := debugDueSleeps.Load(), debugKickWaits.Load()
		n := 2000
		opts := Options{Prefetch: c.prefetch, BatchSize: c.batch}
		if c.dom != nil {
			opts.Mode = Outer
		}
		out, err := Pmap(context.Background(), e.world, c.dom, opts, e.items(n), busy)
		if err != nil {
			t.Fatalf("%s: rank %d: %v", c.name, e.rank, err)
		}
		due, kick := debugDueSleeps.Load()-due0, debugKickWaits.Load()-kick0
		if e.rank == 0 {
			for i, v := range out {
				if v != 3*i {
					t.Fatalf("%s: out[%d] = %d, want %d", c.name, i, v, 3*i)
				}
			}
			if c.batch == 0 {
				// automatic: results only
			} else if due == 0 {
				t.Errorf("%s: the root never timed a sleep by a due RESULT", c.name)
			}
		} else if c.batch == 0 {
			// automatic: results only
		} else if kick == 0 && !c.prefetch {
			t.Errorf("%s: rank %d never waited on a kick", c.name, e.rank)
		} else if kick != 0 && c.prefetch {
			t.Errorf("%s: rank %d waited %d times on a kick with prefetch on", c.name, e.rank, kick)
		}
		// Agree before the next call, so that a failure shows as itself.
		if !e.same(0) {
			t.Fatal("ranks disagree")
		}
	}
}
