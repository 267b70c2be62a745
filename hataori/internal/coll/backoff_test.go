package coll

import (
	"testing"
	"time"
)

// TestBackoffMax checks that the idle sleeps double up to Max when it is
// set and up to BackoffMax when it is not.
func TestBackoffMax(t *testing.T) {
	for _, c := range []struct {
		max, want time.Duration
	}{
		{0, BackoffMax},
		{BackoffMaxShared, BackoffMaxShared},
	} {
		b := Backoff{Max: c.max}
		for range 12 {
			b.Wait(false, nil, nil)
		}
		if b.d != c.want {
			t.Errorf("Max %v: the sleep grew to %v, want %v", c.max, b.d, c.want)
		}
	}
}

// TestBackoffMaxLowered checks that a sleep never exceeds the current Max,
// even when the sleeps grew under a larger one: the shortest of a few
// sleeps right after Max drops from BackoffMaxBacked to BackoffMaxShared
// stays well below BackoffMaxBacked (a sleep never ends early, so with the
// grown sleep every one of them would take at least that).
func TestBackoffMaxLowered(t *testing.T) {
	shortest := time.Hour
	for range 5 {
		b := Backoff{Max: BackoffMaxBacked}
		for range 12 {
			b.Wait(false, nil, nil)
		}
		b.Max = BackoffMaxShared
		t0 := time.Now()
		b.Wait(false, nil, nil)
		shortest = min(shortest, time.Since(t0))
		if b.d != BackoffMaxShared {
			t.Fatalf("the next sleep is %v, want %v", b.d, BackoffMaxShared)
		}
	}
	if shortest >= (BackoffMaxShared+BackoffMaxBacked)/2 {
		t.Fatalf("the shortest sleep after Max dropped to %v took %v", BackoffMaxShared, shortest)
	}
}
