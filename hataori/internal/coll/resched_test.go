package coll

import (
	"testing"
	"time"
)

// countGosched replaces gosched with a counter for the test.
func countGosched(t *testing.T) *int {
	t.Helper()
	n := new(int)
	old := gosched
	gosched = func() { *n++ }
	t.Cleanup(func() { gosched = old })
	return n
}

// TestReschedPaces checks that Check passes through the scheduler only once
// ReschedEvery has passed since the last time (or since the first Check),
// and then restarts the interval.
func TestReschedPaces(t *testing.T) {
	n := countGosched(t)
	var r Resched
	r.Check() // starts the clock
	r.Check()
	if *n != 0 {
		t.Fatalf("%d reschedules right after the first Check, want 0", *n)
	}
	r.last = time.Now().Add(-ReschedEvery - time.Millisecond)
	r.Check()
	if *n != 1 {
		t.Fatalf("%d reschedules once ReschedEvery had passed, want 1", *n)
	}
	r.Check()
	if *n != 1 {
		t.Fatalf("%d reschedules right after one, want still 1 (the interval restarts)", *n)
	}
}

// TestBackoffWaitReschedules checks that an idle wait of a polling loop
// (Backoff.Wait, which the control collectives' waits use) passes through
// the scheduler once the interval has passed, without the loop calling
// Check itself.
func TestBackoffWaitReschedules(t *testing.T) {
	n := countGosched(t)
	var b Backoff
	b.Wait(false, nil, nil)
	if *n != 0 {
		t.Fatalf("%d reschedules in the first wait, want 0", *n)
	}
	b.Resched.last = time.Now().Add(-ReschedEvery - time.Millisecond)
	b.Wait(false, nil, nil)
	if *n != 1 {
		t.Fatalf("%d reschedules in a wait after ReschedEvery, want 1", *n)
	}
}
