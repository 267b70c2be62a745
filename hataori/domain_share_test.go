package hataori

import (
	"slices"
	"strconv"
	"testing"
)

func TestRankShare(t *testing.T) {
	cases := []struct {
		cpus       []int
		rank, size int
		want       []int
	}{
		{[]int{0, 1}, 0, 2, []int{0}},
		{[]int{0, 1}, 1, 2, []int{1}},
		{[]int{0, 1}, 0, 4, []int{0}},
		{[]int{0, 1}, 1, 4, []int{0}},
		{[]int{0, 1}, 2, 4, []int{1}},
		{[]int{0, 1}, 3, 4, []int{1}},
		{[]int{4, 5, 6, 7, 8, 9, 10, 11}, 1, 2, []int{8, 9, 10, 11}},
		{[]int{0, 1, 2, 3, 4, 5, 6}, 1, 3, []int{2, 3}},
		{[]int{0, 1, 2, 3, 4, 5, 6}, 2, 3, []int{4, 5, 6}},
		{[]int{0, 1}, 2, 2, []int{0, 1}}, // out of range: everything
		{nil, 0, 2, nil},
	}
	for _, c := range cases {
		if got := rankShare(c.cpus, c.rank, c.size); !slices.Equal(got, c.want) {
			t.Errorf("rankShare(%v, %d, %d) = %v, want %v", c.cpus, c.rank, c.size, got, c.want)
		}
	}
	// Every CPU belongs to some rank's share when the ranks do not
	// outnumber the CPUs, and the shares do not overlap.
	for a := 1; a <= 9; a++ {
		cpus := firstCPUs(a)
		for size := 1; size <= a; size++ {
			seen := make(map[int]int)
			for r := range size {
				for _, c := range rankShare(cpus, r, size) {
					seen[c]++
				}
			}
			if len(seen) != a {
				t.Errorf("%d CPUs, %d ranks: shares cover %d CPUs", a, size, len(seen))
			}
			for c, k := range seen {
				if k != 1 {
					t.Errorf("%d CPUs, %d ranks: CPU %d in %d shares", a, size, c, k)
				}
			}
		}
	}
}

func TestLauncherLocal(t *testing.T) {
	cases := []struct {
		ompiRank, ompiSize, mpichRank, mpichSize string
		rank, size                               int
		ok                                       bool
	}{
		{"", "", "", "", 0, 0, false},
		{"1", "2", "", "", 1, 2, true},
		{"", "", "3", "4", 3, 4, true},
		{"0", "1", "", "", 0, 0, false}, // alone on the node
		{"2", "2", "", "", 0, 0, false}, // rank out of range
		{"x", "2", "1", "2", 1, 2, true},
	}
	for _, c := range cases {
		t.Setenv("OMPI_COMM_WORLD_LOCAL_RANK", c.ompiRank)
		t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", c.ompiSize)
		t.Setenv("MPI_LOCALRANKID", c.mpichRank)
		t.Setenv("MPI_LOCALNRANKS", c.mpichSize)
		r, n, ok := launcherLocal()
		if r != c.rank || n != c.size || ok != c.ok {
			t.Errorf("%+v: launcherLocal() = %d, %d, %v", c, r, n, ok)
		}
	}
}

// TestNodeOversubscribed checks the launcher's local rank count against
// the CPUs the ranks may use: more ranks than the larger of this process's
// and its parent's CPU counts is oversubscribed, as many is not, and
// without a launcher (or alone on the node) nothing is.
func TestNodeOversubscribed(t *testing.T) {
	cpus := max(len(allowedCPUs()), parentCPUCount())
	t.Setenv("MPI_LOCALRANKID", "")
	t.Setenv("MPI_LOCALNRANKS", "")
	for _, c := range []struct {
		size string
		want bool
	}{
		{"", false},
		{"1", false},
		{strconv.Itoa(max(cpus, 2)), cpus < 2},
		{strconv.Itoa(cpus + 1), true},
		{strconv.Itoa(4 * cpus), true},
	} {
		t.Setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")
		t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", c.size)
		if got := nodeOversubscribed(); got != c.want {
			t.Errorf("%s local ranks, %d CPUs: nodeOversubscribed() = %v, want %v", c.size, cpus, got, c.want)
		}
	}
}
