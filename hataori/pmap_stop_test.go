package hataori

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// TestEvalBatchStopsBetweenItems checks that a batch stops before its next
// item once the callbacks' context has ended: under CollectAll (go on past
// failures) every skipped item gets a canceled fault with the context's
// cause, under FailFast the first one only; and that under FailFast a batch
// stops after its first failing item.
func TestEvalBatchStopsBetweenItems(t *testing.T) {
	items := make([]int, 10)
	for i := range items {
		items[i] = i
	}
	for _, stopOnError := range []bool{false, true} {
		ctx, cancel := context.WithCancelCause(context.Background())
		var calls atomic.Int64
		f := func(_ context.Context, _ int, x int) (int, error) {
			calls.Add(1)
			if x == 1 && !stopOnError {
				return 0, errors.New("boom") // CollectAll goes on
			}
			if x == 2 {
				cancel(ErrStopped)
			}
			return x * 10, nil
		}
		out := make([]int, len(items))
		o, ok := evalBatch(ctx, f, 0, 0, items, out, ctxRule(ctx, stopOnError), newFirstPanic())
		if !ok || calls.Load() != 3 || o.skipped != 7 || out[2] != 20 || out[3] != 0 {
			t.Fatalf("stopOnError=%v: ok=%v calls=%d skipped=%d out=%v, want 3 calls and 7 skipped", stopOnError, ok, calls.Load(), o.skipped, out)
		}
		want := 8 // the failure of item 1, then one per skipped item
		if stopOnError {
			want = 1 // the first skipped item stands for the rest
		}
		if len(o.faults) != want {
			t.Fatalf("stopOnError=%v: %d faults %+v, want %d", stopOnError, len(o.faults), o.faults, want)
		}
		for k, f := range o.faults[want-min(want, 7):] {
			if !f.canceled || f.pos != 3+k || !errors.Is(f.err, ErrStopped) {
				t.Fatalf("stopOnError=%v: fault %+v, want item %d canceled with ErrStopped", stopOnError, f, 3+k)
			}
		}
		if fst := o.first(); stopOnError && (fst == nil || fst.pos != 3 || !fst.canceled) {
			t.Fatalf("first fault %+v, want the canceled item 3", fst)
		}
		if fst := o.first(); !stopOnError && (fst == nil || fst.pos != 1 || fst.canceled) {
			t.Fatalf("first fault %+v, want the failing item 1", fst)
		}
		cancel(nil)
	}

	// A batch taken after the call stopped runs no item at all.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, _ := evalBatch(ctx, func(context.Context, int, int) (int, error) { t.Fatal("an item ran"); return 0, nil }, 0, 0, items, make([]int, 10), ctxRule(ctx, false), newFirstPanic())
	if o.skipped != 10 || len(o.faults) != 10 || !errors.Is(o.faults[0].err, context.Canceled) {
		t.Fatalf("batch after the stop: %+v", o)
	}

	// FailFast: a batch stops after its own first failing item.
	var calls int
	o, _ = evalBatch(context.Background(), func(_ context.Context, _ int, x int) (int, error) {
		calls++
		if x == 4 {
			return 0, errors.New("boom")
		}
		return x, nil
	}, 0, 0, items, make([]int, 10), ctxRule(context.Background(), true), newFirstPanic())
	if calls != 5 || len(o.faults) != 1 || o.faults[0].pos != 4 || o.faults[0].canceled || o.skipped != 0 {
		t.Fatalf("own failure: %d calls, %+v", calls, o)
	}
}

// ctxRule is the rule of a batch that stops only once ctx ends (and, with
// onError, after its first failing item), without failing indices.
func ctxRule(ctx context.Context, onError bool) stopRule {
	return stopRule{onError: onError, halt: ctx.Done()}
}

// TestEvalBatchLowestFailingIndex checks the FailFast rule of evalBatch:
// a running batch stops before its first item above the lowest failing
// index known (rule.low), however it became known (a failure elsewhere
// batch lowered it mid-batch, or it was lowered and the callbacks' context
// cancelled, as the root's CANCEL does), and keeps running the items below
// it, so that a lower failure among them still fails its batch, lowers the
// index and wins; a failure with the call's cancellation lowers nothing;
// haltAll and the caller's context (rule.halt) stop every item at once.
func TestEvalBatchLowestFailingIndex(t *testing.T) {
	batch := func(first, n int) []int {
		items := make([]int, n)
		for i := range items {
			items[i] = first + i
		}
		return items
	}
	parent, end := context.WithCancel(context.Background())
	defer end()
	cctx, cancel := context.WithCancelCause(parent)
	low := newFailIndex()
	rule := stopRule{onError: true, halt: parent.Done(), low: low}
	var ran []int
	f := func(ctx context.Context, _ int, x int) (int, error) {
		ran = append(ran, x)
		switch x {
		case 32:
			low.lower(46) // a failure at 46 becomes known mid-batch
		case 13:
			return 0, fmt.Errorf("boom %d", x)
		case 25:
			return 0, ctx.Err() // the call's own cancellation
		}
		return x, nil
	}

	// A failure at 46 known mid-batch: items up to 46 run, the rest skip.
	o, ok := evalBatch(cctx, f, 0, 30, batch(30, 20), make([]int, 20), rule, newFirstPanic())
	if !ok || fmt.Sprint(ran) != fmt.Sprint(batch(30, 17)) || o.skipped != 3 || len(o.faults) != 1 {
		t.Fatalf("failure at 46 known mid-batch: ran %v, %+v; want items 30..46, 3 skipped", ran, o)
	}
	if f := o.faults[0]; f.pos != 17 || !f.canceled || !errors.Is(f.err, ErrStopped) {
		t.Fatalf("skipped item: %+v, want position 17 canceled with ErrStopped (ctx not ended yet)", f)
	}

	// The coordinator cancels the callbacks' context (ErrStopped): a batch
	// below 46 still runs, and its failure at 13 lowers the index.
	cancel(ErrStopped)
	ran = nil
	o, _ = evalBatch(cctx, f, 0, 10, batch(10, 10), make([]int, 10), rule, newFirstPanic())
	if fmt.Sprint(ran) != "[10 11 12 13]" || low.load() != 13 || o.first() == nil || o.first().pos != 3 || o.first().canceled {
		t.Fatalf("batch below the index after the cancellation: ran %v, low %d, %+v; want items 10..13, item 13 failing, low 13", ran, low.load(), o)
	}

	// Items above 13 do not run; one that starts below runs up to 13.
	ran = nil
	if o, _ = evalBatch(cctx, f, 0, 14, batch(14, 4), make([]int, 4), rule, newFirstPanic()); len(ran) != 0 || o.skipped != 4 || !o.faults[0].canceled {
		t.Fatalf("batch above the index: ran %v, %+v", ran, o)
	}
	ran = nil
	if o, _ = evalBatch(cctx, f, 0, 11, batch(11, 2), make([]int, 2), rule, newFirstPanic()); fmt.Sprint(ran) != "[11 12]" || o.skipped != 0 {
		t.Fatalf("batch below the index: ran %v, %+v", ran, o)
	}

	// A failure with the call's cancellation is no failing index.
	low2 := newFailIndex()
	ran = nil
	o, _ = evalBatch(cctx, f, 0, 25, batch(25, 2), make([]int, 2), stopRule{onError: true, halt: parent.Done(), low: low2}, newFirstPanic())
	if low2.load() != noFailure || len(o.faults) != 1 || !o.faults[0].canceled {
		t.Fatalf("canceled item: low %d, %+v; want no failing index", low2.load(), o)
	}

	// haltAll: nothing runs, not even below every index.
	low2.lower(haltAll)
	ran = nil
	if o, _ = evalBatch(cctx, f, 0, 0, batch(0, 3), make([]int, 3), stopRule{onError: true, halt: parent.Done(), low: low2}, newFirstPanic()); len(ran) != 0 || o.skipped != 3 {
		t.Fatalf("haltAll: ran %v, %+v", ran, o)
	}

	// The caller's context ends: every item stops, below the index too.
	end()
	ran = nil
	if o, _ = evalBatch(cctx, f, 0, 0, batch(0, 3), make([]int, 3), rule, newFirstPanic()); len(ran) != 0 || o.skipped != 3 {
		t.Fatalf("caller's context ended: ran %v, %+v", ran, o)
	}
	if low.lower(20) || !low.lower(-1) || low.load() != haltAll {
		t.Fatal("failIndex.lower does not keep the lowest value")
	}
}

// TestCancelFrame checks CANCEL's payload (wire version 5): the index it
// carries, haltAll, and the payloads refused.
func TestCancelFrame(t *testing.T) {
	for _, v := range []int64{0, 17, haltAll, noFailure - 1} {
		buf := cancelFrame(v)
		h, err := wire.ParseHeader(buf)
		if err != nil || h.Kind != wire.KindCancel || h.Len != 8 || h.Version != wire.Version {
			t.Fatalf("CANCEL(%d): %+v %v", v, h, err)
		}
		if got, err := parseCancel(buf[wire.HeaderSize:]); err != nil || got != v {
			t.Fatalf("CANCEL(%d) parses as %d, %v", v, got, err)
		}
	}
	if _, err := parseCancel(nil); !errors.Is(err, &wire.Error{Kind: wire.ErrLength}) {
		t.Fatalf("empty CANCEL (version 4): %v", err)
	}
	if _, err := parseCancel(cancelFrame(-2)[wire.HeaderSize:]); !errors.Is(err, &wire.Error{Kind: wire.ErrDecode}) {
		t.Fatalf("CANCEL(-2): %v", err)
	}
}

// TestLocalModeAuto checks the zero mode: its name, what it resolves to
// with and without a domain, that the explicit modes keep their meaning,
// and that the options agreement tells it from every explicit mode (the
// mode is compared as passed) and from an invalid one.
func TestLocalModeAuto(t *testing.T) {
	var zero LocalMode
	if zero != Auto || zero.String() != "Auto" || !zero.valid() {
		t.Fatalf("zero LocalMode %v (valid %v), want Auto", zero, zero.valid())
	}
	if Auto.resolve(true) != Outer || Auto.resolve(false) != Sequential {
		t.Fatalf("Auto resolves to %v with a domain, %v without", Auto.resolve(true), Auto.resolve(false))
	}
	for _, m := range []LocalMode{Sequential, Outer, Inner, LocalMode(9), LocalMode(-1)} {
		if m.resolve(true) != m || m.resolve(false) != m {
			t.Errorf("%v resolves to %v / %v, want itself", m, m.resolve(true), m.resolve(false))
		}
	}
	if (Options{}).Mode != Auto {
		t.Fatal("the zero Options has a mode other than Auto")
	}
	seen := map[int64]LocalMode{}
	for _, m := range []LocalMode{Auto, Sequential, Outer, Inner, LocalMode(9)} {
		p := packOptions(Options{Mode: m})
		if o, dup := seen[p]; dup {
			t.Fatalf("modes %v and %v pack alike", o, m)
		}
		seen[p] = m
	}
	if packOptions(Options{Mode: LocalMode(9)}) != packOptions(Options{Mode: LocalMode(-3)}) {
		t.Error("invalid modes pack differently")
	}
	if d := optionsDiff(unpackOptions(packOptions(Options{Mode: Outer})), unpackOptions(packOptions(Options{}))); d != "mode Outer here, Auto on rank 0" {
		t.Errorf("optionsDiff = %q", d)
	}
	if d := optionsDiff(unpackOptions(packOptions(Options{Mode: 9, BatchSize: 1 << 40})), unpackOptions(packOptions(Options{}))); d != "batch size 536870910 or more here, automatic on rank 0; mode an invalid mode here, Auto on rank 0" {
		t.Errorf("optionsDiff = %q", d)
	}
}

// TestMapInAutoUsesEveryWorker checks that MapIn's zero mode runs on every
// worker of the domain: each item waits (for 10 s at most) until both
// workers are in an item at once, which one worker never reaches.
func TestMapInAutoUsesEveryWorker(t *testing.T) {
	d, err := NewDomain(DomainConfig{Workers: 2, Pinning: Declared, Oversubscribe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var n atomic.Int64
	both := make(chan struct{})
	out, err := MapIn(context.Background(), d, Auto, []int{1, 2, 3, 4}, func(x int) (int, error) {
		if n.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
			return x * x, nil
		case <-time.After(10 * time.Second):
			return 0, errors.New("the two workers were never in an item at once")
		}
	})
	if err != nil || out[3] != 16 {
		t.Fatalf("MapIn(Auto): %v %v", out, err)
	}
}
