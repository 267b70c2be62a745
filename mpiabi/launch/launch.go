// Package launch tells which MPI launcher started the process and how many
// ranks it announced, so that a program started by the other MPI's
// launcher (where every rank comes up alone, as a singleton) can be
// detected and explained, and which MPI a library version string names
// (ParseVersion, also under a wrapper such as MPIwrapper). It reads only
// the environment and the strings it is given, and imports no MPI: both of
// Hataori's backends (package mpiabi and the cgo binding) use it.
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

// FamilyOf is the family of the MPI a library version string names:
// ParseVersion(version).Family.
func FamilyOf(version string) Family { return ParseVersion(version).Family }

// Version is what a library version string (MPI_Get_library_version, or
// MPIABI_Get_library_version of an MPIABI library) says about the MPI
// that does the work.
type Version struct {
	// Family is that MPI's family, Unknown when its line names neither
	// Open MPI nor MPICH.
	Family Family
	// MPI is the line that names that MPI, trimmed, for example
	// "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev:
	// v4.1.4, May 26, 2022" or "MPICH Version:\t4.0.2"; "" when the
	// string names none.
	MPI string
	// Wrapper is the wrapper's own line in front of it, for example
	// "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:", and "" when the
	// string is the MPI's own (Hataori's wrapper passes that through
	// unchanged). Nested wrappers' lines are joined by newlines.
	Wrapper string
}

// ParseVersion reads an MPI library version string, the MPI's own or a
// wrapper's. A wrapper may put lines of its own in front of the wrapped
// MPI's string, each ending in "wrapping:" (MPIwrapper writes
// "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:" and then the wrapped
// MPI's string on the next line); ParseVersion skips them and takes the
// first line after them as the MPI's. Its family is read from that line
// alone (Open MPI's begins "Open MPI v…", MPICH's "MPICH Version:"), so
// that nothing later in the string, such as a configure line, can mislead
// it. ParseVersion costs one pass over the string's leading lines and
// never fails: a string it cannot read gives Family Unknown.
func ParseVersion(version string) Version {
	var v Version
	var wrappers []string
	rest := version
	for rest != "" {
		line, next, _ := strings.Cut(rest, "\n")
		rest = next
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasSuffix(line, "wrapping:") {
			wrappers = append(wrappers, line)
			continue
		}
		v.MPI = line
		break
	}
	v.Wrapper = strings.Join(wrappers, "\n")
	switch {
	case strings.Contains(v.MPI, "Open MPI"):
		v.Family = OpenMPI
	case strings.Contains(v.MPI, "MPICH"):
		v.Family = MPICH
	}
	return v
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
