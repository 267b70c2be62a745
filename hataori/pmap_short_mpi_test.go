//go:build (mpirt || mpicgo) && linux

package hataori

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
	"golang.org/x/sys/unix"
)

// threadCount counts the callbacks that ran on the calling goroutine's
// thread (the coordinator, locked to it) and those that ran elsewhere.
type threadCount struct {
	caller  int
	on, off atomic.Int64
}

func (c *threadCount) note() {
	if unix.Gettid() == c.caller {
		c.on.Add(1)
	} else {
		c.off.Add(1)
	}
}

// TestPmapShortPath checks the short path (pmap_short.go) on every rank,
// MPI-only and with a domain (Outer and Sequential): the first call of a
// callback runs on the slots; a later call that the remembered cost says
// is small runs every callback on the coordinator's thread; one that it
// says is large (an input too long for the cost per item, on the root)
// runs on the slots again; a root on the short path runs every item
// itself; results and a FailFast error are the same either way, and the
// communicator stays reusable. Each rank's expected
// path is computed from the remembered cost before the call (takeShort),
// so the verdict does not depend on how long a callback took; the budget
// is raised to 1 s so that the trivial calls' expectation is the short
// path on any schedule.
func TestPmapShortPath(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapShortPath", 2, 4)
		return
	}
	e := newRankEnv(t)
	old := shortWork
	shortWork = time.Second
	defer func() { shortWork = old }()
	// The slot path here is the helper's: on a node with more ranks than
	// CPUs an MPI-only rank would run its batches inline anyway
	// (remoteInline, TestPmapRemoteInline).
	defer func(old func() bool) { inlineWanted = old }(inlineWanted)
	inlineWanted = func() bool { return false }
	ctx := context.Background()
	caller := unix.Gettid()
	for _, m := range []execMode{{"mpi-only", nil, Auto}, {"outer", e.dom, Outer}, {"sequential", e.dom, Sequential}} {
		// The callbacks below are the same code in every mode, and
		// costs are remembered per code: start each mode afresh.
		shortMemo.m = nil
		run := func(what string, cnt *threadCount, n int, f func(int) (int, error), wantShort *bool) ([]int, error) {
			t.Helper()
			key := shortKey{comm: e.world.h, fn: funcCode(f), root: 0}
			want := takeShort(key, e.rank == 0, n)
			if wantShort != nil && want != *wantShort {
				t.Fatalf("%s %s: rank %d: remembered cost gives short=%v, want %v (memo %+v)", m.name, what, e.rank, want, *wantShort, shortMemo.m[key])
			}
			cnt.on.Store(0)
			cnt.off.Store(0)
			out, err := Pmap(ctx, e.world, m.d, Options{Mode: m.mode}, e.items(n), f)
			on, off := cnt.on.Load(), cnt.off.Load()
			switch {
			case want && off != 0:
				t.Errorf("%s %s: rank %d: short path, but %d callbacks ran off the coordinator (%d on it)", m.name, what, e.rank, off, on)
			case !want && on != 0:
				t.Errorf("%s %s: rank %d: slot path, but %d callbacks ran on the coordinator (%d off it)", m.name, what, e.rank, on, off)
			}
			return out, err
		}
		yes, no := true, false
		cnt := &threadCount{caller: caller}
		square := func(x int) (int, error) { cnt.note(); return x * x, nil }
		check := func(what string, out []int, err error, n int) {
			t.Helper()
			want := make([]int, n)
			for i := range want {
				want[i] = i * i
			}
			if err != nil || (e.rank == 0 && !slices.Equal(out, want)) {
				t.Errorf("%s %s: rank %d: %v, %v", m.name, what, e.rank, out, err)
			}
		}
		out, err := run("first call", cnt, 8, square, &no)
		check("first call", out, err, 8)
		var st CallStats
		cnt.on.Store(0)
		cnt.off.Store(0)
		out, err = Pmap(ctx, e.world, m.d, Options{Mode: m.mode, Stats: &st}, e.items(8), square)
		check("second call", out, err, 8)
		if e.rank == 0 {
			if cnt.on.Load() != 8 || cnt.off.Load() != 0 {
				t.Errorf("%s second call: the root ran %d of the 8 items on the short path (%d off the coordinator), want all on it", m.name, cnt.on.Load(), cnt.off.Load())
			}
			var per []int64
			for _, row := range st.Items {
				var n int64
				for _, v := range row {
					n += v
				}
				per = append(per, n)
			}
			if len(per) != e.size || per[0] != 8 {
				t.Errorf("%s second call: CallStats items per rank %v, want all 8 on the root", m.name, per)
			}
		} else if cnt.on.Load()+cnt.off.Load() != 0 {
			t.Errorf("%s second call: rank %d ran %d items while the root ran the call alone", m.name, e.rank, cnt.on.Load()+cnt.off.Load())
		}

		// A failing item on the short path: the same error on every
		// rank, nothing remembered from it, the communicator reusable.
		fails := func(x int) (int, error) {
			cnt.note()
			if x == 5 {
				return 0, fmt.Errorf("item %d failed", x)
			}
			return x * x, nil
		}
		out, err = run("failing callback, items below 5", cnt, 5, fails, &no)
		check("failing callback, items below 5", out, err, 5)
		_, err = run("failing call", cnt, 8, fails, &yes)
		if pe := e.sameError(m.name+" failing call", err, KindUser); pe.Index != 5 {
			t.Errorf("%s failing call: %v, want item 5", m.name, err)
		}
		_, err = run("failing call again", cnt, 8, fails, &yes) // a failed call remembers nothing
		if pe := e.sameError(m.name+" failing call again", err, KindUser); pe.Index != 5 {
			t.Errorf("%s failing call again: %v, want item 5", m.name, err)
		}
		// CollectAll on the short path: every success on the root, the
		// one failure listed on every rank.
		out, err = Pmap(ctx, e.world, m.d, Options{Mode: m.mode, OnError: CollectAll}, e.items(8), fails)
		if pe := e.sameError(m.name+" CollectAll", err, KindUser); pe.Index != 5 || len(pe.Failures) != 1 || pe.Failures[0].Index != 5 {
			t.Errorf("%s CollectAll: %v (failures %+v), want item 5 alone", m.name, err, pe.Failures)
		}
		if e.rank == 0 && (len(out) != 8 || out[7] != 49 || out[4] != 16) {
			t.Errorf("%s CollectAll: results %v", m.name, out)
		}
		// The root's context ending in a call it runs alone (its own
		// callback cancels it at item 3): KindCanceled on every rank,
		// which learn it only in the convergence.
		cancelAt, cancel := -1, context.CancelFunc(func() {})
		cancels := func(x int) (int, error) {
			cnt.note()
			if x == cancelAt {
				cancel()
			}
			return x, nil
		}
		if _, err = run("cancelling callback, no cancel", cnt, 8, cancels, &no); err != nil {
			t.Errorf("%s cancelling callback, no cancel: %v", m.name, err)
		}
		var cctx context.Context
		cctx, cancel = context.WithCancel(ctx)
		cancelAt = 3
		want := e.rank == 0 && takeShort(shortKey{comm: e.world.h, fn: funcCode(cancels), root: 0}, true, 8)
		_, err = Pmap(cctx, e.world, m.d, Options{Mode: m.mode}, e.items(8), cancels)
		cancel()
		if e.rank == 0 && !want {
			t.Errorf("%s: the root did not take the short path for the cancelled call", m.name)
		}
		e.sameError(m.name+" root's context cancelled on the short path", err, KindCanceled)
		e.checkReusable(m.name + " after a failing call")

		// Slow items: 1 ms each for the first 8 indices, so the root's
		// remembered cost per item is at least 1 ms and 2,000 items
		// predict 2 s, over the budget: the root's slots take the call.
		slow := func(x int) (int, error) {
			cnt.note()
			if x < 8 {
				time.Sleep(time.Millisecond)
			}
			return x * x, nil
		}
		out, err = run("slow first call", cnt, 8, slow, &no)
		check("slow first call", out, err, 8)
		var rootWant *bool
		if e.rank == 0 {
			rootWant = &no
		}
		out, err = run("long call after slow items", cnt, 2000, slow, rootWant)
		check("long call after slow items", out, err, 2000)
		e.checkReusable(m.name + " at the end")
	}
}
