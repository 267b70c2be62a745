//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapRemoteInline checks remoteInline with real ranks (2 and 4), the
// node's rule forced on and then off on every rank (inlineWanted), so that
// the verdict does not depend on how many CPUs the machine has:
//
//   - with it on, every callback of an MPI-only Pmap on a rank other than
//     the root runs on the thread that initialised MPI (the coordinator's;
//     MPI_Is_thread_main), and none of PmapContext's or of a Pmap with
//     Prefetch does; with it off none does; the root's never do; every
//     result is right, automatic and fixed batch sizes;
//   - with it on, a CANCEL stops a batch that runs inline between its
//     items: batches of 200 items of 1 ms, the root's item 5 fails (once
//     the root has dealt every other rank a batch, and 20 ms later, so
//     that those batches have started), and the other ranks run far fewer
//     than their 200 (with no look for the CANCEL between items they run
//     them all). Under hataoridebug only (the root counts its TASKs).
func TestPmapRemoteInline(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapRemoteInline", 2, 4)
		return
	}
	e := newRankEnv(t)
	defer func(old func() bool) { inlineWanted = old }(inlineWanted)
	ctx := context.Background()
	const n = 600
	for _, on := range []bool{true, false} {
		inlineWanted = func() bool { return on }
		for _, c := range []struct {
			name    string
			opts    Options
			withCtx bool
			inline  bool // expected on the other ranks with the rule on
		}{
			{"Pmap auto", Options{}, false, true},
			{"Pmap batch 7", Options{BatchSize: 7}, false, true},
			{"Pmap prefetch", Options{Prefetch: true}, false, false},
			{"PmapContext", Options{}, true, false},
		} {
			var onMain, ran atomic.Int64
			f := func(x int) (int, error) {
				// Every item sleeps, so that every rank takes part.
				time.Sleep(50 * time.Microsecond)
				if m, err := mpi.IsThreadMain(); err == nil && m {
					onMain.Add(1)
				}
				ran.Add(1)
				return 3 * x, nil
			}
			var out []int
			var err error
			if c.withCtx {
				out, err = PmapContext(ctx, e.world, nil, c.opts, e.items(n), func(_ context.Context, x int) (int, error) { return f(x) })
			} else {
				out, err = Pmap(ctx, e.world, nil, c.opts, e.items(n), f)
			}
			if err != nil {
				t.Fatalf("rule %v, %s: rank %d: %v", on, c.name, e.rank, err)
			}
			if e.rank == 0 {
				for i, v := range out {
					if v != 3*i {
						t.Fatalf("rule %v, %s: out[%d] = %d", on, c.name, i, v)
					}
				}
			}
			want := e.rank != 0 && on && c.inline
			switch {
			case want && onMain.Load() != ran.Load():
				t.Errorf("rule %v, %s: rank %d ran %d of its %d items on the main thread, want all", on, c.name, e.rank, onMain.Load(), ran.Load())
			case !want && onMain.Load() != 0:
				t.Errorf("rule %v, %s: rank %d ran %d of its %d items on the main thread, want none", on, c.name, e.rank, onMain.Load(), ran.Load())
			}
			if remote := e.sum(e.remoteOnly(ran.Load())); e.rank == 0 {
				t.Logf("rule %v, %s: the other ranks ran %d of %d items", on, c.name, remote, n)
			}
		}
	}
	if traceOn {
		inlineWanted = func() bool { return true }
		e.inlineCancel()
	}
}

// inlineCancel is the CANCEL part of TestPmapRemoteInline.
func (e *rankEnv) inlineCancel() {
	t := e.t
	const batch, n = 200, 200 * 8
	fed := e.remotesFed()
	errBoom := errors.New("boom")
	var ran atomic.Int64
	_, err := Pmap(context.Background(), e.world, nil, Options{BatchSize: batch}, e.items(n), func(x int) (int, error) {
		if e.rank == 0 {
			if x == 5 {
				fed()
				time.Sleep(20 * time.Millisecond)
				return 0, errBoom
			}
			return x, nil
		}
		ran.Add(1)
		time.Sleep(time.Millisecond)
		return x, nil
	})
	var pe *PmapError
	if !errors.As(err, &pe) || pe.Index != 5 {
		t.Fatalf("rank %d: %v, want item 5's failure", e.rank, err)
	}
	remote := e.sum(e.remoteOnly(ran.Load()))
	if e.rank != 0 {
		return
	}
	t.Logf("the other ranks ran %d items of their batches of %d", remote, batch)
	if limit := int64(e.size-1) * batch / 2; remote >= limit {
		t.Errorf("the other ranks ran %d items after the call failed, want fewer than %d: an inline batch ran on past the CANCEL", remote, limit)
	}
}

// remoteOnly is v on a rank other than the root, 0 on the root.
func (e *rankEnv) remoteOnly(v int64) int64 {
	if e.rank == 0 {
		return 0
	}
	return v
}
