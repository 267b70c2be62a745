package hataori

import (
	"testing"
	"time"
)

const us = int64(time.Microsecond)

func TestDueTrackerPredictsFromWork(t *testing.T) {
	d := newDueTracker([]int{1, 1}, 0) // the root (rank 0) and one remote slot
	if !d.active() {
		t.Fatal("tracker off with one remote slot")
	}
	if _, ok := d.next(0); ok {
		t.Fatal("a RESULT is due before any TASK was sent")
	}
	d.taskSent(1, 0, 0, 0, 1, 0) // unknown cost
	if _, ok := d.next(0); ok {
		t.Fatal("a RESULT of unknown cost is predicted")
	}
	if rt := d.resultIn(1, 0, 40*us); rt != 40*us {
		t.Fatalf("round trip = %d, want 40 µs", rt)
	}
	// 400 µs of work: due then (no lateness observed yet).
	d.taskSent(1, 0, 100*us, 400*us, 1, 0)
	if until, ok := d.next(150 * us); !ok || until != 350*time.Microsecond {
		t.Fatalf("next = %v, %v; want 350 µs, true", until, ok)
	}
	// Arriving 30 µs late teaches a lateness of 30 µs.
	d.resultIn(1, 0, 530*us)
	d.taskSent(1, 0, 1000*us, 200*us, 1, 0)
	if until, ok := d.next(1000 * us); !ok || until != 230*time.Microsecond {
		t.Fatalf("next = %v, %v; want 230 µs, true", until, ok)
	}
	// A RESULT without a TASK outstanding measures nothing.
	d.resultIn(1, 0, 1230*us)
	if rt := d.resultIn(1, 0, 5000*us); rt != -1 {
		t.Fatalf("round trip with no TASK outstanding = %d, want -1", rt)
	}
	if _, ok := d.next(6000 * us); ok {
		t.Fatal("a RESULT is due with no TASK outstanding")
	}
}

func TestDueTrackerEarliestSlot(t *testing.T) {
	// Ranks 0 (2 slots) and 2 (3 slots) are remote; rank 1 is the root.
	d := newDueTracker([]int{2, 4, 3}, 1)
	if len(d.clock.at) != 5 {
		t.Fatalf("%d remote slots tracked, want 5", len(d.clock.at))
	}
	d.taskSent(0, 1, 50*us, 100*us, 2, 0)
	d.taskSent(2, 0, 30*us, 100*us, 3, 0)
	if until, ok := d.next(30 * us); !ok || until != 100*time.Microsecond {
		t.Fatalf("next = %v, %v; want the slot due first (100 µs), true", until, ok)
	}
}

func TestDueTrackerOff(t *testing.T) {
	for _, c := range []struct {
		name  string
		slots []int
	}{
		{"world size one", []int{3}},
		{"too many remote slots", []int{1, dueSlots, 1}},
	} {
		d := newDueTracker(c.slots, 0)
		if d.active() {
			t.Errorf("%s: tracker on", c.name)
		}
		d.taskSent(len(c.slots)-1, 0, 0, 10*us, 1, 0) // no effect, no panic
		d.resultIn(len(c.slots)-1, 0, 10*us)
		if _, ok := d.next(5 * us); ok {
			t.Errorf("%s: a RESULT is due", c.name)
		}
	}
}
