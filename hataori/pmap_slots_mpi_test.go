//go:build (mpirt || mpicgo) && hataoridebug

package hataori

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/hataori/hataori-go/internal/sched"
)

// waitAtOnce is the callback body of the slot tests: it counts the
// callbacks running at once on this rank and holds each one until want of
// them have run at once (once reached, later callbacks pass straight
// through), or fails after a bound. It shows by events, not timing, that a
// rank runs want batches at once.
type waitAtOnce struct {
	want          int64
	running, peak atomic.Int64
	reached       chan struct{}
	once          atomic.Bool
}

func newWaitAtOnce(want int) *waitAtOnce {
	return &waitAtOnce{want: int64(want), reached: make(chan struct{})}
}

func (w *waitAtOnce) run(also func() bool) error {
	n := w.running.Add(1)
	defer w.running.Add(-1)
	for {
		p := w.peak.Load()
		if n <= p || w.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if n >= w.want && w.once.CompareAndSwap(false, true) {
		close(w.reached)
	}
	deadline := time.After(20 * time.Second)
	select {
	case <-w.reached:
	case <-deadline:
		return fmt.Errorf("at most %d callbacks ran at once, want %d", w.peak.Load(), w.want)
	}
	for also != nil && !also() {
		select {
		case <-deadline:
			return fmt.Errorf("%d callbacks ran at once, but the condition never held", w.peak.Load())
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// TestPmapSlotsAtOnce shows that a W-worker Outer domain runs W batches at
// once on every rank, the root included: every callback waits until W of
// them run at once on its rank, so a rank that ran one batch at a time
// would fail (the root's callbacks also wait until every remote slot got a
// TASK, so that the root's slots cannot take the whole input first); and
// the root's statistics show every slot of every rank got work.
func TestPmapSlotsAtOnce(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapSlotsAtOnce", 1, 2, 4)
		return
	}
	e := newRankEnv(t) // a 2-worker domain on every rank
	w := newWaitAtOnce(e.dom.Workers())
	var stats *sched.Stats
	pmapRootStats = func(s sched.Stats) { stats = &s }
	// Each callback that passed then takes 20 ms, so that no rank can take
	// the whole input before every slot of every rank has started (across
	// TCP hosts on 2 shared cores, a slot may start 100 ms late).
	n := 16 * e.size * e.dom.Workers()
	base := debugTasks.Load()
	var remoteFed func() bool
	if e.rank == 0 {
		remoteFed = func() bool { return debugTasks.Load()-base >= int64((e.size-1)*e.dom.Workers()) }
	}
	// BatchSize 1: the assertion counts the logical slots the root sees,
	// and automatic sizes add a prefetch slot to every remote rank.
	out, err := Pmap(context.Background(), e.world, e.dom, Options{BatchSize: 1, Mode: Outer}, e.items(n), func(x int) (int, error) {
		err := w.run(remoteFed)
		time.Sleep(20 * time.Millisecond)
		return 2 * x, err
	})
	pmapRootStats = nil
	if err != nil {
		t.Fatalf("rank %d: %v", e.rank, err)
	}
	if e.rank != 0 {
		return
	}
	for i, v := range out {
		if v != 2*i {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
	for r := range e.size {
		if got := len(stats.Batches[r]); got != e.dom.Workers() {
			t.Errorf("rank %d offered %d slots, want %d", r, got, e.dom.Workers())
		}
		for s, b := range stats.Batches[r] {
			if b == 0 {
				t.Errorf("rank %d slot %d ran no batch: %v", r, s, stats.Batches)
			}
		}
	}
}

// TestPmapRootAnswersWhileComputing shows, by the root coordinator's event
// counters, that remote READYs are answered while the root's own item
// runs, MPI-only and hybrid: the first item the root runs returns only
// after the coordinator has received several RESULTs from other ranks
// meanwhile, which a coordinator busy computing could never do. The
// schedule is forced by events: the root's one slot takes item 0 before
// the first deal, and the coordinator encodes no TASK before that item's
// callback has begun (a task gate), so every other item is dealt while it
// runs, in at least five remote batches (sizes start at 1 and at most
// double), however late the root's slot runs.
func TestPmapRootAnswersWhileComputing(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapRootAnswersWhileComputing", 2, 4)
		return
	}
	e := newRankEnv(t)
	d1, err := NewDomain(DomainConfig{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer d1.Close()
	for _, m := range []struct {
		name string
		d    *Domain
	}{{"mpi-only", nil}, {"hybrid", d1}} {
		const n = 40
		var first atomic.Bool
		var waitErr error
		g := newGate(1)
		end := e.gateTasks(m.name, g)
		_, err := Pmap(context.Background(), e.world, m.d, Options{}, e.gatedItems(n), func(x gated) (gated, error) {
			if e.rank != 0 || !first.CompareAndSwap(false, true) {
				return x, nil
			}
			base, tasks := debugResults.Load(), debugTasks.Load()
			g.arrive()
			deadline := time.Now().Add(20 * time.Second)
			for debugResults.Load() < base+3 {
				if time.Now().After(deadline) {
					waitErr = fmt.Errorf("%s: while the root's own item ran, the coordinator received %d RESULTs and sent %d TASKs, want >= 3 RESULTs",
						m.name, debugResults.Load()-base, debugTasks.Load()-tasks)
					break
				}
				time.Sleep(time.Millisecond)
			}
			return x, nil
		})
		end()
		if err != nil {
			t.Fatalf("%s: rank %d: %v", m.name, e.rank, err)
		}
		if waitErr != nil {
			t.Error(waitErr)
		}
		if e.rank == 0 && !first.Load() {
			t.Errorf("%s: the root computed no item", m.name)
		}
	}
}

// TestPmapPrefetch runs Pmap with bounded prefetch, MPI-only and hybrid:
// every item exactly once, results in order, the same converged error on
// every rank when items fail, and, by the remote coordinators' own count,
// every remote rank held a prefetched batch beyond its running ones at
// some point, never more than one.
func TestPmapPrefetch(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapPrefetch", 1, 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	for _, m := range e.modes() {
		for _, batch := range []int{1, 3} {
			what := fmt.Sprintf("%s batch=%d", m.name, batch)
			debugPrefetchMax.Store(0)
			var calls atomic.Int64
			// A remote rank's callbacks wait until its coordinator holds a
			// batch beyond the running ones (which only prefetch allows),
			// that is, until every logical slot of the rank got a TASK
			// while its executor slots still run their first batches. The
			// schedule is forced by events: the root's first deal answers
			// every rank's first READY with a TASK for each of its logical
			// slots before the root serves any other message, so faster
			// ranks cannot take the input first however late a rank's
			// coordinator runs (across TCP hosts on a loaded machine its
			// READYs could arrive tens of ms apart); the root's callbacks
			// wait until that deal is sent (every remote logical slot got a
			// TASK), so the root's own slots cannot take it first either.
			// 20 or 60 batches outnumber the root's slots and the remote
			// logical slots together (at most 2 + 3*3).
			logical := 2 // a remote rank's executor slot plus the prefetch slot
			if m.mode == Outer {
				logical = e.dom.Workers() + 1
			}
			base := debugTasks.Load()
			out, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode, Prefetch: true}, e.items(60), func(x int) (int, error) {
				calls.Add(1)
				if e.rank == 0 {
					for deadline := time.Now().Add(20 * time.Second); debugTasks.Load()-base < int64((e.size-1)*logical); time.Sleep(100 * time.Microsecond) {
						if time.Now().After(deadline) {
							return 0, fmt.Errorf("the root sent %d TASKs, want %d", debugTasks.Load()-base, (e.size-1)*logical)
						}
					}
					return 3 * x, nil
				}
				for deadline := time.Now().Add(20 * time.Second); debugPrefetchMax.Load() < 1; time.Sleep(100 * time.Microsecond) {
					if time.Now().After(deadline) {
						return 0, fmt.Errorf("rank %d never held a prefetched batch", e.rank)
					}
				}
				return 3 * x, nil
			})
			if err != nil {
				t.Fatalf("%s: rank %d: %v", what, e.rank, err)
			}
			if total := e.sum(calls.Load()); total != 60 {
				t.Errorf("%s: %d callback calls over all ranks, want 60", what, total)
			}
			for i, v := range out {
				if v != 3*i {
					t.Fatalf("%s: out[%d] = %d", what, i, v)
				}
			}
			if p := debugPrefetchMax.Load(); e.rank != 0 && (p > 1 || p < 1) {
				t.Errorf("%s: rank %d held %d batches beyond its running ones, want exactly 1 at some point", what, e.rank, p)
			}
			_, err = Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode, Prefetch: true}, e.items(60), func(x int) (int, error) {
				if x == 41 || x == 17 {
					return 0, fmt.Errorf("item %d failed", x)
				}
				return x, nil
			})
			pe := e.sameError(what, err, KindUser)
			if pe.Key/int64(3*e.size) != 17 {
				t.Errorf("%s: winning key %d is not item 17's", what, pe.Key)
			}
			e.checkReusable(what)
		}
	}
}

// debugTasksSent is the number of TASKs this process's root has sent so far.
func debugTasksSent() int64 { return debugTasks.Load() }
