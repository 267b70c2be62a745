//go:build mpicgo && !mpirt

package mpi

import (
	"fmt"
	"os"
	"strconv"
)

// launcherVars are the environment variables through which launchers
// announce the job's world size, with the MPI that sets them.
var launcherVars = []struct{ name, mpi string }{
	{"OMPI_COMM_WORLD_SIZE", "Open MPI (mpirun)"},
	{"PMI_SIZE", "MPICH (mpiexec.mpich, Hydra)"},
	{"PMIX_SIZE", "a PMIx launcher"},
}

// launcherSize returns the world size announced by the launcher, the
// variable and the launcher's MPI, or ok=false when none is set.
func launcherSize() (n int, name, mpi string, ok bool) {
	for _, v := range launcherVars {
		s, set := os.LookupEnv(v.name)
		if !set {
			continue
		}
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n, v.name, v.mpi, true
		}
	}
	return 0, "", "", false
}

// checkLauncher compares the launcher's world size with size, the size of
// the world communicator, and explains a mismatch. linked names the MPI
// this binary uses.
func checkLauncher(size int, linked string) error {
	n, name, launcher, ok := launcherSize()
	if !ok || n == size {
		return nil
	}
	return &Error{Func: "CheckLauncher", Code: CodeNotMPI, Msg: fmt.Sprintf(
		"the launcher started %d processes (%s=%d, set by %s) but MPI_Comm_size(MPI_COMM_WORLD) is %d, so each rank came up alone: "+
			"the binary is linked against %s and was started by another MPI's launcher; "+
			"start it with %s's own launcher (mpirun for Open MPI, mpiexec.mpich for MPICH)",
		n, name, n, launcher, size, linked, linked)}
}
