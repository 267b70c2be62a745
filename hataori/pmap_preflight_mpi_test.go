//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapPreflight checks that every preflight disagreement returns the
// same error on every rank before any scheduler message, and that the
// local entry checks (re-entrancy, non-main goroutine) fail before any MPI
// call.
func TestPmapPreflight(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapPreflight")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	id := func(x int) (int, error) { return x, nil }
	type tc struct {
		name  string
		skip  bool
		opts  Options
		d     *Domain
		items Maybe[[]int]
		setup func() func()
	}
	last := e.size - 1
	cases := []tc{
		{name: "different roots", skip: e.size < 2, opts: Options{Root: min(e.rank, 1)}, d: e.dom,
			items: func() Maybe[[]int] {
				if e.rank <= 1 {
					return Some([]int{1})
				}
				return None[[]int]()
			}()},
		{name: "root out of range", opts: Options{Root: e.size}, items: None[[]int]()},
		{name: "payload on two ranks", skip: e.size < 2, d: e.dom, items: func() Maybe[[]int] {
			if e.rank <= 1 {
				return Some([]int{1, 2})
			}
			return None[[]int]()
		}()},
		{name: "no payload", d: e.dom, items: None[[]int]()},
		{name: "different batch sizes", skip: e.size < 2, opts: Options{BatchSize: 1 + e.rank}, items: e.items(4)},
		{name: "negative batch size", opts: Options{BatchSize: -1}, items: e.items(4)},
		{name: "prefetch on one rank only", skip: e.size < 2, opts: Options{Prefetch: e.rank == last}, d: e.dom, items: e.items(4)},
		{name: "mpi-only needs sequential", opts: Options{Mode: Outer}, items: e.items(4)},
		{name: "invalid mode", opts: Options{Mode: LocalMode(7)}, d: e.dom, items: e.items(4)},
		{name: "busy domain on the last rank", d: e.dom, items: e.items(4), setup: func() func() {
			if e.rank != last {
				return func() {}
			}
			release, err := e.dom.admit()
			if err != nil {
				t.Fatal(err)
			}
			return release
		}},
	}
	for _, c := range cases {
		if c.skip {
			continue
		}
		undo := func() {}
		if c.setup != nil {
			undo = c.setup()
		}
		var err error
		evs := traceEvents(func() { _, err = Pmap(ctx, e.world, c.d, c.opts, c.items, id) })
		undo()
		pe := e.sameError(c.name, err, KindPreflight)
		if !errors.Is(err, KindPreflight) {
			t.Errorf("%s: %v does not match KindPreflight", c.name, err)
		}
		if n := countPrefix(evs, "send") + countPrefix(evs, "recv") + countPrefix(evs, "root-batch"); n != 0 {
			t.Errorf("%s: %d scheduler events after a failed preflight: %v", c.name, n, evs)
		}
		if c.name == "busy domain on the last rank" && pe.Rank != last {
			t.Errorf("%s: reported by rank %d, want %d", c.name, pe.Rank, last)
		}
		e.checkReusable(c.name)
	}

	// A context that is already done.
	done, cancel := context.WithCancel(ctx)
	if e.rank == 0 {
		cancel()
	}
	_, err := Pmap(done, e.world, e.dom, Options{}, e.items(3), id)
	cancel()
	if pe := e.sameError("done context", err, KindPreflight); pe.Rank != 0 {
		t.Errorf("done context: reported by rank %d", pe.Rank)
	}

	// Entered from another goroutine: local failure before any MPI call
	// (under hataoridebug any MPI call there would panic).
	res := make(chan error)
	evs := traceEvents(func() {
		go func() {
			_, err := Pmap(ctx, e.world, e.dom, Options{}, e.items(3), id)
			res <- err
		}()
		err = <-res
	})
	var pe *PmapError
	if !errors.As(err, &pe) || pe.Kind != KindPreflight || pe.Rank != -1 || !errors.Is(err, ErrNotMainThread) {
		t.Errorf("other goroutine: %v, want a local KindPreflight wrapping ErrNotMainThread", err)
	}
	if len(evs) != 0 {
		t.Errorf("other goroutine: events %v, want none", evs)
	}

	// Re-entry from an MPI-only callback (which runs on this goroutine):
	// every nested call fails with KindReentrant, and some rank made one.
	var nested, bad int64
	_, err = Pmap(ctx, e.world, nil, Options{}, e.items(2*e.size), func(x int) (int, error) {
		_, inner := Pmap(ctx, e.world, nil, Options{}, None[[]int](), id)
		nested++
		if !errors.Is(inner, KindReentrant) {
			bad++
			t.Errorf("re-entry: rank %d: nested call returned %v, want KindReentrant", e.rank, inner)
		}
		return x, nil
	})
	if err != nil {
		t.Errorf("outer call of re-entry: %v", err)
	}
	if total := e.sum(nested); total != int64(2*e.size) || bad != 0 {
		t.Errorf("re-entry: %d nested calls over all ranks (want %d), %d not rejected", total, 2*e.size, bad)
	}
	e.checkReusable("re-entry")
}

// TestPmapProgress shows, by recorded event order, that the hybrid root
// receives a remote 2 MiB RESULT while one of its own batches is still
// running: the root's callbacks only return after the coordinator traced
// such a receive, and the coordinator sends no TASK before each of the
// root's slots holds a batch (the task gate), so the root holds some
// batches and the other ranks get the rest, however late either starts.
func TestPmapProgress(t *testing.T) {
	needTrace(t)
	if !mpitest.Child() {
		pmapJob(t, "TestPmapProgress", 2, 4)
		return
	}
	e := newRankEnv(t)
	const n = 16
	for _, mode := range []LocalMode{Sequential, Outer, Inner} {
		got := make(chan struct{})
		closed := false
		var evs []string
		running := 0 // root batches running, as traced (the trace is serialised)
		pmapTrace = func(ev string) {
			evs = append(evs, ev)
			switch {
			case strings.HasPrefix(ev, "root-batch-start"):
				running++
			case strings.HasPrefix(ev, "root-batch-done"):
				running--
			case strings.HasPrefix(ev, "recv-result") && running > 0 && !closed:
				closed = true
				close(got)
			}
		}
		m := execMode{mode.String(), e.dom, mode}
		g := newGate(m.rootSlots())
		end := e.gateTasks(m.name, g)
		out, err := Pmap(context.Background(), e.world, e.dom, Options{Mode: mode}, e.gatedItems(n), func(x gated) ([]float64, error) {
			if e.rank == 0 {
				g.arrive()
				select {
				case <-got:
				case <-time.After(30 * time.Second):
					return nil, errors.New("the root's batch saw no remote RESULT")
				}
				return []float64{1}, nil
			}
			return make([]float64, 1<<18), nil // 2 MiB
		})
		end()
		pmapTrace = nil
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if e.rank != 0 {
			continue
		}
		local := 0
		for i, v := range out {
			switch len(v) {
			case 1:
				local++
			case 1 << 18:
			default:
				t.Fatalf("%v: result %d has length %d", mode, i, len(v))
			}
		}
		if local == 0 || local == n {
			t.Fatalf("%v: the root computed %d of %d items", mode, local, n)
		}
		// Some root batch started before a 2 MiB RESULT was received and
		// ended after it.
		started := map[string]int{}
		overlapped := false
		for i, ev := range evs {
			if id, ok := strings.CutPrefix(ev, "root-batch-start "); ok {
				started[id] = i
			}
			if id, ok := strings.CutPrefix(ev, "root-batch-done "); ok {
				if st, ok := started[id]; ok {
					for _, mid := range evs[st:i] {
						if strings.HasPrefix(mid, "recv-result") && strings.Contains(mid, "bytes=2097") {
							overlapped = true
						}
					}
				}
			}
		}
		if !overlapped {
			t.Errorf("%v: no root batch overlapped a 2 MiB RESULT: %v", mode, evs)
		}
	}
}

// TestPmapPanicAborts checks that a panicking callback ends the whole job
// with exit code ExitPanic.
func TestPmapPanicAborts(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 60 * time.Second,
				// Open MPI's mpirun reports the MPI_Abort code itself.
				// MPICH's Hydra sometimes kills the aborting rank before it
				// exits with that code and then reports 1, so under MPICH
				// the code is checked through the abort message.
				ExitCodes: map[string]int{"openmpi": ExitPanic, "mpich": mpitest.AnyFailure}, Want: []string{
					"Pmap callback panicked: item 3 exploded",
					fmt.Sprintf("aborting the MPI job with exit code %d", ExitPanic)}})
		}
		return
	}
	e := newRankEnv(t)
	_, _ = Pmap(context.Background(), e.world, e.dom, Options{Mode: Outer}, e.items(6), func(x int) (int, error) {
		if x == 3 {
			panic("item 3 exploded")
		}
		time.Sleep(time.Millisecond)
		return x, nil
	})
	t.Error("Pmap returned after a callback panic")
}
