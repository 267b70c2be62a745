package sched

import (
	"errors"
	"math"
	"testing"
)

func TestKeyRoundTripAndOrder(t *testing.T) {
	const size = 4
	prev := int64(-1)
	for task := int64(0); task < 5; task++ {
		for c := ClassWire; c < NumClasses; c++ {
			for r := range size {
				k, err := Key(task, c, size, r)
				if err != nil {
					t.Fatal(err)
				}
				if k <= prev {
					t.Fatalf("key %d not above %d: order (task, class, rank) broken", k, prev)
				}
				prev = k
				gt, gc, gr := SplitKey(k, size)
				if gt != task || gc != c || gr != r {
					t.Fatalf("SplitKey(%d) = %d %d %d", k, gt, gc, gr)
				}
			}
		}
	}
}

func TestKeyChecks(t *testing.T) {
	bad := []struct {
		task       int64
		class      Class
		size, rank int
		want       error
	}{
		{-1, ClassUser, 2, 0, ErrConfig},
		{0, NumClasses, 2, 0, ErrConfig},
		{0, ClassUser, 2, 2, ErrConfig},
		{0, ClassUser, 0, 0, ErrConfig},
		{math.MaxInt64 / 3, ClassDrain, 1, 0, ErrOverflow},
		{math.MaxInt64 / 6, ClassUser, 2, 1, ErrOverflow},
	}
	for _, b := range bad {
		if _, err := Key(b.task, b.class, b.size, b.rank); !errors.Is(err, b.want) {
			t.Errorf("Key(%d,%d,%d,%d) = %v, want %v", b.task, b.class, b.size, b.rank, err, b.want)
		}
	}
	// The largest encodable key stays below the NoError sentinel.
	k, err := Key((math.MaxInt64-2)/3, ClassWire, 1, 0)
	if err != nil || k >= NoError {
		t.Fatalf("largest key %d %v", k, err)
	}
}
