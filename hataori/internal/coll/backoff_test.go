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
