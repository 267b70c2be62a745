package mpitest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// launcher is one MPI's job launcher.
type launcher struct {
	// name is the MPI: "openmpi" or "mpich".
	name string
	// bin is the launcher executable.
	bin string
	// wrapperEnv is the variable naming this MPI's MPIABI wrapper.
	wrapperEnv string
	// env is added to the job's environment.
	env []string
	// args returns the launcher arguments before the program for n ranks.
	args func(n int) []string
}

var (
	openMPI = launcher{
		name:       "openmpi",
		bin:        "mpirun",
		wrapperEnv: WrapperOpenMPIEnv,
		env: []string{
			"OMPI_ALLOW_RUN_AS_ROOT=1",
			"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
			"OMPI_MCA_rmaps_base_oversubscribe=1",
		},
		args: func(n int) []string {
			return []string{"--oversubscribe", "--tag-output", "-n", strconv.Itoa(n)}
		},
	}
	mpich = launcher{
		name:       "mpich",
		bin:        "mpiexec.mpich",
		wrapperEnv: WrapperMPICHEnv,
		env:        []string{"UCX_HANDLE_ERRORS=none"},
		args: func(n int) []string {
			return []string{"-l", "-n", strconv.Itoa(n)}
		},
	}
	launchers = []launcher{openMPI, mpich}
)

// pairing is one way of running a job: a launcher and the MPI the ranks
// use (the same MPI, unless a mismatch is requested on purpose).
type pairing struct {
	launcher launcher
	// lib is the MPI used by the ranks.
	lib launcher
}

// name is the subtest name of the pairing for n ranks.
func (p pairing) name(n int) string {
	if p.launcher.name == p.lib.name {
		return fmt.Sprintf("%s-n%d", p.launcher.name, n)
	}
	return fmt.Sprintf("%s-launcher-%s-lib-n%d", p.launcher.name, p.lib.name, n)
}

// pairings lists the launcher/library pairs usable with this build's
// backend, or why there are none. mismatch pairs every library with the
// other MPI's launcher.
func pairings(mismatch bool) ([]pairing, string) {
	var libs []launcher
	switch mpi.Backend() {
	case "mpirt":
		libs = launchers
	case "mpicgo":
		for _, l := range launchers {
			if l.name == mpi.LinkedMPI() {
				libs = append(libs, l)
			}
		}
		if len(libs) == 0 {
			return nil, fmt.Sprintf("the mpicgo binary is linked against an MPI the harness does not know (%q)", mpi.LinkedMPI())
		}
	default:
		return nil, "no MPI backend in this build (build with -tags mpirt or -tags mpicgo)"
	}
	var ps []pairing
	for _, lib := range libs {
		if !mismatch {
			ps = append(ps, pairing{launcher: lib, lib: lib})
			continue
		}
		for _, l := range launchers {
			if l.name != lib.name {
				ps = append(ps, pairing{launcher: l, lib: lib})
			}
		}
	}
	return ps, ""
}

// prepare checks that the pairing can run and returns the launcher path and
// the extra environment, or why MPI is unavailable.
func (p pairing) prepare() (bin string, env []string, missing string) {
	bin, err := exec.LookPath(p.launcher.bin)
	if err != nil {
		return "", nil, fmt.Sprintf("%s launcher %s not found: %v", p.launcher.name, p.launcher.bin, err)
	}
	env = append(env, p.launcher.env...)
	if p.lib.name != p.launcher.name {
		env = append(env, p.lib.env...)
	}
	if mpi.Backend() == "mpirt" {
		path := os.Getenv(p.lib.wrapperEnv)
		if path == "" {
			return "", nil, fmt.Sprintf("%s is not set: build the MPIABI wrappers with eval \"$(scripts/build-wrappers.sh)\"", p.lib.wrapperEnv)
		}
		if _, err := os.Stat(path); err != nil {
			return "", nil, fmt.Sprintf("%s=%s: %v", p.lib.wrapperEnv, path, err)
		}
		env = append(env, "MPI_RT_LIB="+path)
	}
	return bin, env, ""
}
