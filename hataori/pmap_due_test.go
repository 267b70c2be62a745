package hataori

import (
	"testing"
	"time"
)

const us = int64(time.Microsecond)

func TestDueTrackerEstimate(t *testing.T) {
	d := newDueTracker([]int{1, 1}, 0) // the root (rank 0) and one remote slot
	if !d.active() {
		t.Fatal("tracker off with one remote slot")
	}
	if _, ok := d.next(0); ok {
		t.Fatal("a RESULT is due before any TASK was sent")
	}
	d.taskSent(1, 0, 0)
	if _, ok := d.next(0); ok {
		t.Fatal("a RESULT is due before any cycle was measured")
	}
	d.resultIn(1, 0, 40*us)
	if d.cycle != 40*us {
		t.Fatalf("cycle = %d, want the first observation 40 µs", d.cycle)
	}
	// A sooner RESULT lowers the estimate at once; a later one not.
	d.taskSent(1, 0, 100*us)
	d.resultIn(1, 0, 130*us)
	d.taskSent(1, 0, 200*us)
	d.resultIn(1, 0, 290*us)
	if d.cycle != 30*us {
		t.Fatalf("cycle = %d, want the lowest observation 30 µs", d.cycle)
	}
	d.taskSent(1, 0, 1000*us)
	until, ok := d.next(1010 * us)
	if !ok || until != 20*time.Microsecond {
		t.Fatalf("next = %v, %v; want 20 µs, true", until, ok)
	}
	// A RESULT without a TASK outstanding (a second one for the slot, or
	// one after a failure) measures nothing.
	d.resultIn(1, 0, 1030*us)
	d.resultIn(1, 0, 5000*us)
	if d.cycle != 30*us {
		t.Fatalf("cycle = %d after a RESULT with no TASK outstanding, want 30 µs", d.cycle)
	}
	if _, ok := d.next(6000 * us); ok {
		t.Fatal("a RESULT is due with no TASK outstanding")
	}
}

func TestDueTrackerWindow(t *testing.T) {
	d := newDueTracker([]int{1, 1}, 0)
	now := int64(0)
	observe := func(c int64) {
		d.taskSent(1, 0, now)
		now += c
		d.resultIn(1, 0, now)
	}
	observe(20 * us) // an early low
	for range dueWindow - 1 {
		observe(50 * us)
	}
	// The window closed with 20 µs as its lowest: aimed 1/16 early.
	if want := 20*us - 20*us/16; d.cycle != want {
		t.Fatalf("cycle after the first window = %d, want %d", d.cycle, want)
	}
	for range dueWindow {
		observe(50 * us)
	}
	// A window without the low forgets it.
	if want := 50*us - 50*us/16; d.cycle != want {
		t.Fatalf("cycle after a window of 50 µs = %d, want %d", d.cycle, want)
	}
}

func TestDueTrackerEarliestSlot(t *testing.T) {
	// Ranks 0 (2 slots) and 2 (3 slots) are remote; rank 1 is the root.
	d := newDueTracker([]int{2, 4, 3}, 1)
	if len(d.clock.at) != 5 {
		t.Fatalf("%d remote slots tracked, want 5", len(d.clock.at))
	}
	d.taskSent(2, 2, 0)
	d.resultIn(2, 2, 10*us)
	d.taskSent(0, 1, 50*us)
	d.taskSent(2, 0, 30*us)
	if until, ok := d.next(30 * us); !ok || until != 10*time.Microsecond {
		t.Fatalf("next = %v, %v; want the slot whose TASK left first (10 µs), true", until, ok)
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
		d.taskSent(len(c.slots)-1, 0, 0) // no effect, no panic
		d.resultIn(len(c.slots)-1, 0, 10*us)
		if _, ok := d.next(5 * us); ok {
			t.Errorf("%s: a RESULT is due", c.name)
		}
	}
}
