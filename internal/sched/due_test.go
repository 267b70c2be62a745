package sched

import "testing"

func TestDueQueuedBehindRunning(t *testing.T) {
	// Rank 1: one executor slot and a prefetch slot (2 logical slots).
	d := NewDue([]int{1, 2}, 0)
	if d.Slots() != 2 {
		t.Fatalf("Slots = %d, want 2", d.Slots())
	}
	d.Sent(1, 0, 0, 100, 1)
	d.Sent(1, 1, 10, 50, 1) // queued behind slot 0's batch
	if u, ok := d.Next(10); !ok || u != 90 {
		t.Fatalf("Next = %d, %v; want slot 0's end (90), true", u, ok)
	}
	// Slot 0's RESULT at 120 (20 late): slot 1's batch starts then.
	d.Arrived(1, 0, 120)
	if u, ok := d.Next(120); !ok || u != 50+20 {
		t.Fatalf("Next = %d, %v; want 50 of work + 20 late, true", u, ok)
	}
	d.Sent(1, 0, 125, 100, 1) // queued behind slot 1's
	d.Arrived(1, 1, 190)      // on time
	if u, ok := d.Next(190); !ok || u != 100+20 {
		t.Fatalf("Next = %d, %v; want 120, true", u, ok)
	}
}

func TestDueLatenessWindow(t *testing.T) {
	d := NewDue([]int{1, 1}, 0)
	now := int64(1e6)
	observe := func(late int64) {
		d.Sent(1, 0, now, 100, 1)
		now += 100 + late
		d.Arrived(1, 0, now)
	}
	observe(5) // an early low: while the window holds fewer than 8, the lowest
	for range 6 {
		observe(40)
	}
	if d.late != 5 {
		t.Fatalf("late = %d after 7 observations, want the lowest, 5", d.late)
	}
	for range DueWindow - 7 {
		observe(40)
	}
	if d.late != 40 {
		t.Fatalf("late = %d with one low of 5 among 32, want the lowest eighth, 40", d.late)
	}
	// A few RESULTs far earlier than predicted (the work overestimated)
	// do not make every later prediction early by as much.
	for range 3 {
		observe(-5000)
	}
	if d.late != 40 {
		t.Fatalf("late = %d after 3 RESULTs 5000 early, want 40", d.late)
	}
	d.Sent(1, 0, now, 100, 1)
	if u, ok := d.Next(now); !ok || u != 140 {
		t.Fatalf("Next = %d, %v; want 100 of work + 40 late, true", u, ok)
	}
	now += 140
	d.Arrived(1, 0, now)
	// When most come early, the estimate follows: the cost leans high.
	for range DueWindow {
		observe(-30)
	}
	if d.late != -30 {
		t.Fatalf("late = %d after a window of -30, want -30", d.late)
	}
}

func TestDueUnknownAndModelMismatch(t *testing.T) {
	d := NewDue([]int{2, 1, 3}, 1) // rank 0: 2 slots, rank 2: 3 (2 executors)
	d.Sent(0, 0, 0, 0, 2)          // unknown cost: running, no prediction
	if _, ok := d.Next(0); ok {
		t.Fatal("a TASK of unknown cost is predicted")
	}
	d.Sent(2, 0, 0, 100, 2)
	d.Sent(2, 1, 0, 100, 2)
	d.Sent(2, 2, 0, 100, 2) // queued
	// The queued one returns first (the model was wrong): dropped, the
	// running ones stay predicted.
	d.Arrived(2, 2, 60)
	if u, ok := d.Next(60); !ok || u != 40 {
		t.Fatalf("Next = %d, %v; want 40, true", u, ok)
	}
	d.Arrived(2, 0, 100)
	d.Arrived(2, 1, 100)
	d.Arrived(0, 0, 100)
	if _, ok := d.Next(100); ok {
		t.Fatal("a RESULT is due with none outstanding")
	}
	d.Sent(2, 5, 0, 100, 2) // a slot the rank does not have: ignored
	d.Arrived(2, 5, 0)
}
