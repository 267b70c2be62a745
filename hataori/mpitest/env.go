package mpitest

import "os"

// Environment variables of the harness.
const (
	// ChildEnv is set to "1" in the environment of every rank.
	ChildEnv = "HATAORI_MPITEST_CHILD"
	// RequireEnv set to "1" turns every "MPI is not available" skip into a
	// failure (scripts/test.sh sets it).
	RequireEnv = "HATAORI_REQUIRE_MPI"
	// WrapperOpenMPIEnv names the MPIABI wrapper built over Open MPI
	// (mpirt backend; set by scripts/build-wrappers.sh).
	WrapperOpenMPIEnv = "HATAORI_WRAPPER_OPENMPI"
	// WrapperMPICHEnv names the MPIABI wrapper built over MPICH.
	WrapperMPICHEnv = "HATAORI_WRAPPER_MPICH"
)

// Child reports whether this process is a rank started by Run.
func Child() bool { return os.Getenv(ChildEnv) == "1" }

// required reports whether missing MPI must fail instead of skip.
func required() bool { return os.Getenv(RequireEnv) == "1" }
