package hataori

import (
	"os"
	"strconv"
	"sync"
)

// launcherLocal returns this process's index among the ranks a launcher
// started on this node and their count, from the launcher's environment
// (Open MPI: OMPI_COMM_WORLD_LOCAL_RANK and _LOCAL_SIZE; MPICH's Hydra:
// MPI_LOCALRANKID and MPI_LOCALNRANKS). ok is false outside a launcher, for
// a single rank on the node, and for values that do not make sense.
func launcherLocal() (rank, size int, ok bool) {
	for _, v := range [][2]string{
		{"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
		{"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
	} {
		r, err1 := strconv.Atoi(os.Getenv(v[0]))
		n, err2 := strconv.Atoi(os.Getenv(v[1]))
		if err1 == nil && err2 == nil && n > 1 && r >= 0 && r < n {
			return r, n, true
		}
	}
	return 0, 0, false
}

// rankShare returns local rank rank's share of cpus, the CPUs that size
// ranks of one node may all run on (the launcher bound none of them): an
// equal, contiguous slice of cpus in order, at least one CPU (when the
// ranks outnumber the CPUs, consecutive ranks share one).
func rankShare(cpus []int, rank, size int) []int {
	a := len(cpus)
	if a == 0 || size < 1 || rank < 0 || rank >= size {
		return cpus
	}
	lo, hi := rank*a/size, (rank+1)*a/size
	if hi <= lo {
		return []int{cpus[lo]}
	}
	return cpus[lo:hi]
}

// nodeOversubscribed reports whether the launcher started more ranks on
// this node than there are CPUs for them: more than the CPUs this process
// or its parent (the launcher's proxy on the node) may run on, whichever
// is more. Then the ranks' threads wait for a core, often in the middle of
// an MPI call (and Open MPI, seeing the node oversubscribed, gives up the
// core inside its polls); see keepCoordinatorResponsive.
func nodeOversubscribed() bool {
	_, size, ok := launcherLocal()
	if !ok {
		return false
	}
	return size > max(len(allowedCPUs()), parentCPUCount())
}

// oversubscribedOnce is nodeOversubscribed, looked at once per process
// (the launcher's variables do not change; an affinity change after the
// first call is not seen).
var oversubscribedOnce = sync.OnceValue(nodeOversubscribed)
