package hataori

import "testing"

func TestNodeRanks(t *testing.T) {
	for _, c := range []struct {
		ompi, mpich string
		want        int
	}{{"", "", 1}, {"4", "", 4}, {"", "3", 3}, {"2", "5", 2}, {"x", "0", 1}, {"-1", "", 1}} {
		t.Setenv("OMPI_COMM_WORLD_LOCAL_SIZE", c.ompi)
		t.Setenv("MPI_LOCALNRANKS", c.mpich)
		if got := readNodeRanks(); got != c.want {
			t.Errorf("OMPI %q, MPICH %q: readNodeRanks = %d, want %d", c.ompi, c.mpich, got, c.want)
		}
	}
}
