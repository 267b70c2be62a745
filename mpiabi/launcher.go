package mpiabi

import "github.com/hataori/hataori-go/mpiabi/launch"

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
	a, bad := launch.Mismatch(size)
	if !bad {
		return nil
	}
	version, _ := l.LibraryVersion()
	v := launch.ParseVersion(version)
	name := v.MPI
	if name == "" {
		name = "unknown MPI library"
	}
	return &LauncherError{
		Var: a.Var, LauncherSize: a.Size, CommSize: size, Launcher: a.Who,
		Library: name, Path: l.Path, Hint: launcherHint(a.Family, v.Family),
	}
}

// launcherHint says how to pair launcher and library.
func launcherHint(launcher, lib launch.Family) string {
	h := "this library wraps " + lib.String() + ": start the program with " + lib.Launcher()
	if launcher != launch.Unknown && launcher != lib {
		h += ", or keep " + launcher.Launcher() + " and set " + EnvVar + " to a wrapper built for " + launcher.String()
	} else {
		h += ", or set " + EnvVar + " to a wrapper built for the MPI whose launcher you use"
	}
	return h
}
