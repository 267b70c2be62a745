// Package launch tells which MPI launcher started the process and how many
// ranks it announced, so that a program started by the other MPI's
// launcher (where every rank comes up alone, as a singleton) can be
// detected and explained. It reads only the environment and imports no
// MPI: both of Hataori's backends (package mpiabi and the cgo binding) use
// it.
package launch

import (
	"os"
	"strconv"
	"strings"
)

// Family is an MPI implementation family, as far as pairing launchers and
// libraries is concerned.
type Family int

// The families Hataori tells apart.
const (
	Unknown Family = iota
	OpenMPI
	MPICH
)

// String names the family ("Open MPI", "MPICH").
func (f Family) String() string {
	switch f {
	case OpenMPI:
		return "Open MPI"
	case MPICH:
		return "MPICH"
	}
	return "an unknown MPI"
}

// Launcher names the launcher that belongs to the family.
func (f Family) Launcher() string {
	switch f {
	case OpenMPI:
		return "Open MPI's mpirun (mpirun.openmpi)"
	case MPICH:
		return "MPICH's mpiexec (mpiexec.mpich)"
	}
	return "the mpirun of the MPI it uses"
}

// FamilyOf guesses the family from an MPI library version string
// (MPI_Get_library_version).
func FamilyOf(version string) Family {
	switch {
	case strings.Contains(version, "Open MPI"):
		return OpenMPI
	case strings.Contains(version, "MPICH"):
		return MPICH
	}
	return Unknown
}

// Announcement is the world size a launcher exported to every rank.
type Announcement struct {
	Var    string // the variable, e.g. "OMPI_COMM_WORLD_SIZE"
	Size   int    // its value
	Who    string // which launcher sets it
	Family Family // the launcher's family (Unknown for PMIx)
}

// vars are the world-size variables launchers export, in the order they
// are consulted.
var vars = []Announcement{
	{Var: "OMPI_COMM_WORLD_SIZE", Who: "Open MPI's mpirun", Family: OpenMPI},
	{Var: "PMI_SIZE", Who: "MPICH's mpiexec (Hydra) or another PMI launcher", Family: MPICH},
	{Var: "PMIX_SIZE", Who: "a PMIx launcher", Family: Unknown},
}

// Mismatch returns the first launcher announcement whose world size is not
// commSize, the size of the world communicator, and false when every
// announced size agrees or no launcher variable is set (a singleton run).
func Mismatch(commSize int) (Announcement, bool) {
	for _, a := range vars {
		s, ok := os.LookupEnv(a.Var)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 || n == commSize {
			continue
		}
		a.Size = n
		return a, true
	}
	return Announcement{}, false
}
