//go:build mpicgo && !mpirt

package mpi

import (
	"fmt"

	"github.com/hataori/hataori-go/mpiabi/launch"
)

// checkLauncher compares the launcher's world size with size, the size of
// the world communicator, and explains a mismatch. linked names the MPI
// this binary uses.
func checkLauncher(size int, linked string) error {
	a, bad := launch.Mismatch(size)
	if !bad {
		return nil
	}
	lib := map[string]launch.Family{"openmpi": launch.OpenMPI, "mpich": launch.MPICH}[linked]
	return &Error{Func: "CheckLauncher", Code: CodeNotMPI, Msg: fmt.Sprintf(
		"the launcher started %d processes (%s=%d, set by %s) but MPI_Comm_size(MPI_COMM_WORLD) is %d, so each rank came up alone: "+
			"the binary is linked against %s and was started by another MPI's launcher; start it with %s",
		a.Size, a.Var, a.Size, a.Who, size, lib, lib.Launcher())}
}
