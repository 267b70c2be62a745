//go:build mpirt || mpicgo

package wire

import "testing"

// TestCounts: under hataoridebug every codec entry point counts one call;
// without it nothing is counted.
func TestCounts(t *testing.T) {
	if !Counting {
		t.Skip("Counts counts only under -tags hataoridebug")
	}
	e0, d0 := Counts()
	b, _ := EncodeValue(nil, 1)
	_, _ = DecodeValue[int](b)
	b, _ = EncodeItems(nil, []int{1})
	_, _ = DecodeItems[int](b, 1)
	e1, d1 := Counts()
	if e1-e0 != 2 || d1-d0 != 2 {
		t.Fatalf("Counts moved by (%d, %d), want (2, 2)", e1-e0, d1-d0)
	}
}

func TestCountsOffCountsNothing(t *testing.T) {
	if Counting {
		t.Skip("this build counts (hataoridebug)")
	}
	b, _ := EncodeValue(nil, 1)
	_, _ = DecodeValue[int](b)
	if e, d := Counts(); e != 0 || d != 0 {
		t.Fatalf("Counts = (%d, %d) without hataoridebug, want (0, 0)", e, d)
	}
}
