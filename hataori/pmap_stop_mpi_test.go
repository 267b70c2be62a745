//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// Tests of issue 20 items 4 (a running batch stops between items once the
// call is stopping) and 5 (a zero Options with a domain uses every
// worker).

// stopBatch is the batch size of the stopping tests: large, so that a
// batch that ran on after the call stopped would show.
const stopBatch = 400

// batchHold is one rank's side of a stopping test, forcing the schedule
// by events, never by timing: the first batch that starts on the rank
// (its first item, a multiple of stopBatch) holds in its first item until
// the call's context ends (for gateWait at most: then the item fails and
// so does the test); the second batch that starts on the rank calls
// second (which fails its item, or cancels a context). With zero, batch
// 0 (item 0) is neither: its first item calls second on whichever rank
// runs it, and the rank's first and second batches are counted among the
// others. Every later item of the held batch that still runs is counted
// in after.
type batchHold struct {
	zero   bool         // batch 0 calls second and neither holds nor counts
	starts atomic.Int64 // batches started on this rank (but batch 0 with zero)
	held   atomic.Int64 // the held batch's first item, -1 before
	after  atomic.Int64 // items of the held batch that ran after its hold
	late   atomic.Bool  // the hold was never released
}

func newBatchHold() *batchHold {
	h := &batchHold{}
	h.held.Store(-1)
	return h
}

// callback returns the Pmap callback of h; second runs for the first item
// of the rank's second batch (and of batch 0, with h.zero).
func (h *batchHold) callback(second func(x int) (int, error)) func(context.Context, int) (int, error) {
	return func(ctx context.Context, x int) (int, error) {
		if x == 0 && h.zero {
			return second(x)
		}
		if x%stopBatch == 0 {
			switch h.starts.Add(1) {
			case 1:
				h.held.Store(int64(x))
				select {
				case <-ctx.Done():
					return x, nil // a normal result: only the items after it must be skipped
				case <-time.After(gateWait):
					h.late.Store(true)
					return 0, errors.New("the held batch was never released")
				}
			case 2:
				return second(x)
			}
		}
		if held := h.held.Load(); held >= 0 && int64(x) > held && int64(x) < held+stopBatch {
			h.after.Add(1)
		}
		return x, nil
	}
}

// check fails the test when the rank's held batch ran on for more than one
// item after its hold, or was never released.
func (h *batchHold) check(e *rankEnv, what string) {
	e.t.Helper()
	if h.late.Load() {
		e.t.Errorf("%s: rank %d: the held batch was never released", what, e.rank)
	}
	if n := h.after.Load(); n > 1 {
		e.t.Errorf("%s: rank %d: the held batch (from item %d) ran %d more items after the call was stopping, want at most 1", what, e.rank, h.held.Load(), n)
	}
}

// stopModes are the executors of the stopping tests: two slots on every
// rank (a domain of 2 workers, Outer and Auto), so that on every rank one
// batch holds while another starts.
func (e *rankEnv) stopModes() []execMode {
	return []execMode{{"outer", e.dom, Outer}, {"auto", e.dom, Auto}}
}

// stopItems is enough items that every slot of every rank gets a batch of
// the first deal (2 slots per rank), plus some.
func (e *rankEnv) stopItems() Maybe[[]int] { return e.items(stopBatch * (2*e.size + 2)) }

// TestPmapStopFailFastBatch checks that under FailFast a failing item
// stops the running batches of every rank between items, before their
// first item above the lowest failing index known: item 0 (batch 0) fails
// on whichever rank runs it, and on every rank the first other batch
// holds in its first item until the call is stopping, so a held batch is
// running on the root's slots (every job size) and on every remote rank
// when the failure arrives, with stopBatch-1 items, all above the failing
// index 0, still to run (a remote rank learns the index from the root's
// CANCEL, before its context ends); each must skip them all (at most one
// more item). The other batches run normally. Every rank returns the same
// KindUser error, item 0's. (A held batch below the failing index would
// run on: see TestEvalBatchLowestFailingIndex.)
func TestPmapStopFailFastBatch(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapStopFailFastBatch")
		return
	}
	e := newRankEnv(t)
	for _, m := range e.stopModes() {
		what := "failfast " + m.name
		h := newBatchHold()
		h.zero = true
		_, err := PmapContext(context.Background(), e.world, m.d, Options{BatchSize: stopBatch, Mode: m.mode}, e.stopItems(),
			h.callback(func(x int) (int, error) {
				if x == 0 {
					return 0, fmt.Errorf("boom %d", x)
				}
				return x, nil
			}))
		pe := e.sameError(what, err, KindUser)
		if pe.Index != 0 || pe.Message != "boom 0" {
			t.Errorf("%s: %v (Index %d), want item 0's failure", what, err, pe.Index)
		}
		h.check(e, what)
		e.checkReusable(what)
	}
}

// TestPmapStopCanceledBatch checks that a context that ends mid-batch stops
// the running batches of every rank between items, under CollectAll (where
// failing items do not stop the call) and FailFast: on the root the second
// batch cancels the root's context, on other ranks it just runs; every
// held batch must skip its remaining items, every rank returns the same
// KindCanceled error, and under CollectAll the root holds the result of
// every item that is not in Failures, and Failures lists every item
// without a result (the skipped ones as canceled).
func TestPmapStopCanceledBatch(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapStopCanceledBatch")
		return
	}
	e := newRankEnv(t)
	for _, policy := range []ErrorPolicy{CollectAll, FailFast} {
		for _, m := range e.stopModes() {
			what := fmt.Sprintf("canceled %v %s", policy, m.name)
			h := newBatchHold()
			ctx, cancel := context.WithCancel(context.Background())
			out, err := PmapContext(ctx, e.world, m.d, Options{BatchSize: stopBatch, Mode: m.mode, OnError: policy}, e.stopItems(),
				h.callback(func(x int) (int, error) {
					if e.rank == 0 {
						cancel()
					}
					return x, nil
				}))
			cancel()
			pe := e.sameError(what, err, KindCanceled)
			h.check(e, what)
			if policy == CollectAll {
				e.checkCanceledTable(what, pe, out, stopBatch*(2*e.size+2))
			}
			e.checkReusable(what)
		}
	}
}

// checkCanceledTable checks a CollectAll call stopped by a context: the
// Failures lists are the same on every rank, and on the root every index is
// either listed or holds its result (the identity); the items the held
// batches skipped are listed.
func (e *rankEnv) checkCanceledTable(what string, pe *PmapError, out []int, n int) {
	e.t.Helper()
	var h int64
	for _, f := range pe.Failures {
		h = h*31 + int64(f.Index)*7 + int64(f.Kind)
	}
	if !e.same(h) || !e.same(int64(len(pe.Failures))) {
		e.t.Errorf("%s: rank %d: Failures differ between ranks (%d entries)", what, e.rank, len(pe.Failures))
	}
	if len(pe.Failures) == 0 {
		e.t.Errorf("%s: no item listed, want the skipped ones", what)
	}
	if e.rank != 0 {
		return
	}
	listed := make(map[int]bool, len(pe.Failures))
	for _, f := range pe.Failures {
		if f.Kind != KindCanceled {
			e.t.Errorf("%s: item %d listed with kind %v, want %v (%s)", what, f.Index, f.Kind, KindCanceled, f.Message)
		}
		listed[f.Index] = true
	}
	if len(out) != n {
		e.t.Fatalf("%s: %d results, want %d", what, len(out), n)
	}
	for i, v := range out {
		if !listed[i] && v != i {
			e.t.Errorf("%s: item %d: result %d and not listed", what, i, v)
			return
		}
	}
}

// TestPmapAutoModeUsesEveryWorker checks that a zero Options with a domain
// of 2 workers runs on both (Auto means Outer): the root's callbacks wait,
// for gateWait at most, until both of the root's workers are in a callback
// at once, which one slot (the old zero mode, Sequential) never reaches,
// while the gated items keep the root's coordinator from sending any TASK
// before (see gateTasks), so the other ranks cannot take the batches the
// root's second slot needs; and the root's CallStats show 2 slots on every
// rank. It also checks that an MPI-only zero Options call works (Auto
// means Sequential there), that ranks with and without a domain may mix
// under Auto (the agreement compares the mode as passed, before each rank
// resolves it), and that Auto on one rank against Outer on another fails
// with ErrOptionsDiffer on every rank.
func TestPmapAutoModeUsesEveryWorker(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapAutoModeUsesEveryWorker")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	if w := e.dom.Workers(); w != 2 {
		t.Fatalf("domain of %d workers, want 2", w)
	}
	g := newGate(2)
	end := e.gateTasks("zero Options on a domain", g)
	var stats CallStats
	out, err := Pmap(ctx, e.world, e.dom, Options{Stats: &stats}, e.gatedItems(64), func(x gated) (int, error) {
		if e.rank == 0 {
			g.arrive()
			g.wait()
			if g.late.Load() {
				return 0, errors.New("the root's two workers were never in a callback at once")
			}
		}
		return 2 * int(x), nil
	})
	end()
	if err != nil {
		t.Fatalf("zero Options on a domain: %v", err)
	}
	if e.rank == 0 {
		for i, v := range out {
			if v != 2*i {
				t.Fatalf("item %d: %d, want %d", i, v, 2*i)
			}
		}
		for r, slots := range stats.Items {
			if len(slots) != 2 {
				t.Errorf("rank %d ran %d slots under a zero Options, want 2 (its workers): %v", r, len(slots), slots)
			}
		}
		if len(stats.Items) != e.size {
			t.Errorf("CallStats has %d ranks, want %d", len(stats.Items), e.size)
		}
	}

	// MPI-only: Auto is Sequential.
	out, err = Pmap(ctx, e.world, nil, Options{}, e.items(10), func(x int) (int, error) { return x + 1, nil })
	if err != nil || (e.rank == 0 && (len(out) != 10 || out[9] != 10)) {
		t.Fatalf("MPI-only zero Options: %v %v", out, err)
	}
	if e.size == 1 {
		return
	}
	// A domain on the root only, MPI-only elsewhere, all Auto.
	d := e.dom
	if e.rank != 0 {
		d = nil
	}
	out, err = Pmap(ctx, e.world, d, Options{}, e.items(20), func(x int) (int, error) { return -x, nil })
	if err != nil || (e.rank == 0 && (len(out) != 20 || out[19] != -19)) {
		t.Fatalf("mixed domain and MPI-only under Auto: %v %v", out, err)
	}
	// Auto against Outer: the options differ as passed.
	mode := Auto
	if e.rank == e.size-1 {
		mode = Outer
	}
	_, err = Pmap(ctx, e.world, e.dom, Options{Mode: mode}, e.items(4), func(x int) (int, error) { return x, nil })
	pe := e.sameError("Auto against Outer", err, KindPreflight)
	if !errors.Is(err, ErrOptionsDiffer) || !strings.Contains(pe.Message, "mode Outer here, Auto on rank 0") {
		t.Errorf("Auto against Outer: %v, want ErrOptionsDiffer naming the modes", err)
	}
	e.checkReusable("Auto against Outer")
}

// causeError is the error of an item whose Error method (which the engine
// calls after noting the failing index and before sending the RESULT)
// first waits, once, until its rank has started sending one more RESULT
// than when the call began: the schedule of TestPmapStopCauseOnWay.
type causeError struct {
	once  sync.Once
	began *atomic.Bool
	base  int64
	late  *atomic.Bool
}

func (c *causeError) Error() string {
	c.once.Do(func() {
		c.began.Store(true)
		for deadline := time.Now().Add(gateWait); debugSent.Load() < c.base+1; time.Sleep(100 * time.Microsecond) {
			if time.Now().After(deadline) {
				c.late.Store(true)
				return
			}
		}
	})
	return "item 2 failed"
}

// TestPmapStopCauseOnWay: under FailFast a remote batch that stopped on a
// failure of its own rank can reach the root before that failure's RESULT
// (a rank's slots send in the order they finish); the root must not take
// it for a call-level stop, which would stop the batches that still hold
// a lower failure. Forced by events, 2 ranks, batch 2: the root's one slot
// takes [0 1] before the first deal, rank 1's two slots get [2 3] and
// [4 5]. Item 2 fails with a causeError, which holds its RESULT until
// rank 1 has sent the RESULT of [4 5]; item 4 waits until that hold
// began, so its batch stops before item 5 (above the failing index) and
// its canceled RESULT reaches the root first. The root's item 0 waits
// until the call's context ends (the root has heard of the stop); then
// item 1 must still run, and its failure, the lowest failing index, wins
// on every rank.
func TestPmapStopCauseOnWay(t *testing.T) {
	needTrace(t) // debugSent counts in hataoridebug builds only
	if !mpitest.Child() {
		pmapJob(t, "TestPmapStopCauseOnWay", 2)
		return
	}
	e := newRankEnv(t)
	d := e.dom // rank 1: two slots
	if e.rank == 0 {
		d1, err := NewDomain(DomainConfig{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer d1.Close()
		d = d1
	}
	var began, late atomic.Bool
	errItem2 := &causeError{began: &began, base: debugSent.Load(), late: &late}
	_, err := PmapContext(context.Background(), e.world, d, Options{BatchSize: 2, Mode: Outer}, e.items(6), func(ctx context.Context, x int) (int, error) {
		switch x {
		case 0:
			select {
			case <-ctx.Done():
			case <-time.After(gateWait):
				late.Store(true)
			}
		case 1:
			return 0, errors.New("item 1 failed")
		case 2:
			return 0, errItem2
		case 4:
			for deadline := time.Now().Add(gateWait); !began.Load(); time.Sleep(100 * time.Microsecond) {
				if time.Now().After(deadline) {
					late.Store(true)
					break
				}
			}
		}
		return x, nil
	})
	if late.Load() {
		t.Errorf("rank %d: an event of the forced schedule never came (after %v)", e.rank, gateWait)
	}
	pe := e.sameError("cause on its way", err, KindUser)
	if pe.Index != 1 || pe.Rank != 0 {
		t.Errorf("rank %d: error %v, want the failure of item 1 on rank 0 (the root stopped every batch when a batch stopped by item 2 reached it first)", e.rank, err)
	}
	e.checkReusable("cause on its way")
}
