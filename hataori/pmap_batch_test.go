package hataori

import (
	"fmt"
	"testing"
)

// The lane records the lowest failing position (Outer evaluates every
// item), writes results in place, and captures panics instead of raising.
func TestBatchLaneOutcomes(t *testing.T) {
	d, err := NewDomain(DomainConfig{Workers: 3, Placement: Declared})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, exec := range []Executor{inlineExecutor(), d.Executor(Sequential), d.Executor(Outer), d.Executor(Inner)} {
		release, err := exec.Enter()
		if err != nil {
			t.Fatal(err)
		}
		items := []int{0, 1, 2, 3, 4, 5, 6, 7}
		out := make([]int, len(items))
		lane := newBatchLane(exec, func(_ int, x int) (int, error) {
			if x == 5 || x == 6 {
				return 0, fmt.Errorf("bad %d", x)
			}
			if x == 7 {
				panic("seven")
			}
			return 10 * x, nil
		})
		lane.start(items[:5], out[:5])
		<-lane.done
		if lane.errIdx != -1 || lane.panic != nil || fmt.Sprint(out[:5]) != "[0 10 20 30 40]" {
			t.Fatalf("%T clean batch: errIdx %d panic %v out %v", exec, lane.errIdx, lane.panic, out)
		}
		lane.start(items[4:7], out[4:7])
		<-lane.done
		if lane.errIdx != 1 || lane.err == nil || lane.err.Error() != "bad 5" {
			t.Fatalf("%T failing batch: errIdx %d err %v", exec, lane.errIdx, lane.err)
		}
		lane.start(items[7:], out[7:])
		<-lane.done
		if lane.panic == nil || lane.panic.Value != "seven" || len(lane.panic.Stack) == 0 {
			t.Fatalf("%T panic not captured: %+v", exec, lane.panic)
		}
		release()
	}
}
