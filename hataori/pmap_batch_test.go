package hataori

import (
	"context"
	"fmt"
	"testing"
)

// evalBatch records the failing positions (the lowest first), stops after
// the first only with stopOnError, writes results in place, and captures
// panics instead of raising them.
func TestEvalBatchOutcomes(t *testing.T) {
	ctx := context.Background()
	f := func(_ context.Context, slot int, x int) (int, error) {
		if slot != 2 {
			return 0, fmt.Errorf("slot %d, want 2", slot)
		}
		if x == 5 || x == 6 {
			return 0, fmt.Errorf("bad %d", x)
		}
		if x == 7 {
			panic("seven")
		}
		return 10 * x, nil
	}
	items := []int{0, 1, 2, 3, 4, 5, 6, 4}
	for _, stop := range []bool{false, true} {
		pan := newFirstPanic()
		out := make([]int, len(items))
		o, ok := evalBatch(ctx, f, 2, 0, items[:5], out[:5], ctxRule(ctx, stop), pan)
		if !ok || o.first() != nil || fmt.Sprint(out[:5]) != "[0 10 20 30 40]" {
			t.Fatalf("stop=%v clean batch: ok %v faults %v out %v", stop, ok, o.faults, out)
		}
		clear(out)
		o, ok = evalBatch(ctx, f, 2, 4, items[4:], out[4:], ctxRule(ctx, stop), pan)
		if f := o.first(); !ok || f == nil || f.pos != 1 || f.err.Error() != "bad 5" || f.canceled {
			t.Fatalf("stop=%v failing batch: ok %v faults %v", stop, ok, o.faults)
		}
		if want := map[bool]int{true: 1, false: 2}[stop]; len(o.faults) != want {
			t.Fatalf("stop=%v: %d faults recorded, want %d", stop, len(o.faults), want)
		}
		// Only without stopOnError does the item after the failures run.
		if got := out[7] == 40; got == stop {
			t.Fatalf("stop=%v: item after the failures ran: %v", stop, got)
		}
		_, ok = evalBatch(ctx, f, 2, 0, []int{7, 1}, make([]int, 2), ctxRule(ctx, stop), pan)
		p := pan.p.Load()
		if ok || p == nil || p.Value != "seven" || len(p.Stack) == 0 {
			t.Fatalf("stop=%v panic not captured: ok %v %+v", stop, ok, p)
		}
		select {
		case <-pan.wake:
		default:
			t.Fatal("a captured panic did not wake the coordinator")
		}
	}
}

// An item that fails with the call's own cancellation is marked stopped
// only once the call's context has ended.
func TestEvalBatchStopped(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	f := func(ctx context.Context, _ int, x int) (int, error) {
		if x == 0 {
			return 0, ctx.Err()
		}
		return 0, fmt.Errorf("item %d: %w", x, context.Canceled)
	}
	o, _ := evalBatch(ctx, f, 0, 0, []int{1}, make([]int, 1), ctxRule(ctx, false), newFirstPanic())
	if len(o.faults) != 1 || o.faults[0].canceled {
		t.Fatalf("before cancellation: %+v", o.faults)
	}
	cancel(ErrStopped)
	o, _ = evalBatch(ctx, f, 0, 0, []int{0, 1}, make([]int, 2), ctxRule(ctx, false), newFirstPanic())
	if len(o.faults) != 2 || !o.faults[0].canceled || !o.faults[1].canceled || o.first().pos != 0 {
		t.Fatalf("after cancellation: %+v", o.faults)
	}
}
