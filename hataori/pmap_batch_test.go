package hataori

import (
	"fmt"
	"testing"
)

// evalBatch records the lowest failing position, stops after it only with
// stopOnError, writes results in place, and captures panics instead of
// raising them.
func TestEvalBatchOutcomes(t *testing.T) {
	f := func(slot int, x int) (int, error) {
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
		pan := newPanicSlot()
		out := make([]int, len(items))
		o, ok := evalBatch(f, 2, items[:5], out[:5], stop, pan)
		if !ok || o.errIdx != -1 || fmt.Sprint(out[:5]) != "[0 10 20 30 40]" {
			t.Fatalf("stop=%v clean batch: ok %v errIdx %d out %v", stop, ok, o.errIdx, out)
		}
		clear(out)
		o, ok = evalBatch(f, 2, items[4:], out[4:], stop, pan)
		if !ok || o.errIdx != 1 || o.err == nil || o.err.Error() != "bad 5" {
			t.Fatalf("stop=%v failing batch: ok %v errIdx %d err %v", stop, ok, o.errIdx, o.err)
		}
		// Only without stopOnError does the item after the failures run.
		if got := out[7] == 40; got == stop {
			t.Fatalf("stop=%v: item after the failures ran: %v", stop, got)
		}
		o, ok = evalBatch(f, 2, []int{7, 1}, make([]int, 2), stop, pan)
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
