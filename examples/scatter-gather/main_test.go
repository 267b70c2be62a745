package main

import (
	"context"
	"testing"
)

func TestStoppingTime(t *testing.T) {
	for x, want := range map[uint64]uint32{1: 0, 2: 1, 3: 7, 27: 111, 77031: 350} {
		if got, err := stoppingTime(x); err != nil || got != want {
			t.Errorf("stoppingTime(%d) = %d, %v; want %d", x, got, err, want)
		}
	}
	if _, err := stoppingTime(0); err == nil {
		t.Error("stoppingTime(0) did not fail")
	}
}

// TestChecksumLocal pins the checksum that scripts/test.sh expects from
// every run, local or under mpirun.
func TestChecksumLocal(t *testing.T) {
	steps, err := computeLocal(context.Background(), numbers(100000))
	if err != nil {
		t.Fatal(err)
	}
	want := "collatz 1..100000: 10753840 steps, longest 350 (from 77031), fnv-1a 0x28955459eb5bf4dd"
	if got := checksum(steps); got != want {
		t.Errorf("checksum = %q, want %q", got, want)
	}
}
