package mpiabi

import (
	"os"
	"strconv"
	"strings"
)

// mpiFamily is an MPI implementation family, as far as pairing launchers
// and libraries is concerned.
type mpiFamily int

const (
	familyUnknown mpiFamily = iota
	familyOpenMPI
	familyMPICH
)

func (f mpiFamily) String() string {
	switch f {
	case familyOpenMPI:
		return "Open MPI"
	case familyMPICH:
		return "MPICH"
	}
	return "an unknown MPI"
}

// launcherCmd names the launcher that belongs to a family.
func (f mpiFamily) launcherCmd() string {
	switch f {
	case familyOpenMPI:
		return "Open MPI's mpirun (mpirun.openmpi)"
	case familyMPICH:
		return "MPICH's mpiexec (mpiexec.mpich)"
	}
	return "the mpirun of the MPI it wraps"
}

// launcherVars are the world-size variables that launchers export to every
// rank, with the family that sets them.
var launcherVars = []struct {
	name   string
	family mpiFamily
	who    string
}{
	{"OMPI_COMM_WORLD_SIZE", familyOpenMPI, "Open MPI's mpirun"},
	{"PMI_SIZE", familyMPICH, "MPICH's mpiexec (Hydra) or another PMI launcher"},
	{"PMIX_SIZE", familyUnknown, "a PMIx launcher"},
}

// libraryFamily guesses the wrapped MPI from its version string.
func libraryFamily(version string) mpiFamily {
	switch {
	case strings.Contains(version, "Open MPI"):
		return familyOpenMPI
	case strings.Contains(version, "MPICH"):
		return familyMPICH
	}
	return familyUnknown
}

// CheckLauncher compares the world size announced by the launcher
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE) with CommSize(c), where c is
// normally l.CommWorld. A wrapper built for one MPI that is started by the
// other MPI's launcher comes up as N singletons of size 1; CheckLauncher
// then returns a *LauncherError saying which mpirun and which library to
// pair. Without launcher variables (a singleton run) it returns nil.
func (l *Lib) CheckLauncher(c Comm) error {
	size, err := l.CommSize(c)
	if err != nil {
		return err
	}
	for _, v := range launcherVars {
		s, ok := os.LookupEnv(v.name)
		if !ok {
			continue
		}
		n, perr := strconv.Atoi(strings.TrimSpace(s))
		if perr != nil || n <= 0 || n == size {
			continue
		}
		version, _ := l.LibraryVersion()
		first := strings.TrimSpace(strings.SplitN(version, "\n", 2)[0])
		if first == "" {
			first = "unknown MPI library"
		}
		return &LauncherError{
			Var: v.name, LauncherSize: n, CommSize: size, Launcher: v.who,
			Library: first, Path: l.Path, Hint: launcherHint(v.family, libraryFamily(version)),
		}
	}
	return nil
}

// launcherHint says how to pair launcher and library.
func launcherHint(launcher, lib mpiFamily) string {
	h := "this library wraps " + lib.String() + ": start the program with " + lib.launcherCmd()
	if launcher != familyUnknown && launcher != lib {
		h += ", or keep " + launcher.launcherCmd() + " and set " + EnvVar + " to a wrapper built for " + launcher.String()
	} else {
		h += ", or set " + EnvVar + " to a wrapper built for the MPI whose launcher you use"
	}
	return h
}
