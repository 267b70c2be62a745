package hataori

import (
	"slices"
	"testing"
)

// TestDealOrder pins the order of the root's first deal: every rank's
// first READY stands for one of each of its logical slots, answered slot
// by slot across the ranks (slot 0 of every rank in the order the READYs
// were collected, then slot 1, …), each with its rank's READY status.
func TestDealOrder(t *testing.T) {
	slots := []int{2, 3, 2, 1} // rank 0 is the root: its slots are not dealt
	pending := []pendingReady{{rank: 1, status: statusOK}, {rank: 2, status: statusCanceled}, {rank: 3, status: statusOK}}
	got := dealOrder(slots, pending)
	want := []dealt{
		{1, 0, statusOK}, {2, 0, statusCanceled}, {3, 0, statusOK},
		{1, 1, statusOK}, {2, 1, statusCanceled},
		{1, 2, statusOK},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("dealOrder = %v, want %v", got, want)
	}
	if got := dealOrder([]int{1}, nil); len(got) != 0 {
		t.Fatalf("dealOrder at world size one = %v, want nothing", got)
	}
}
