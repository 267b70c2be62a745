//go:build (mpirt || mpicgo) && linux

package mpi4py

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// passLine matches the line each rank of the script prints when every
// check passed on every rank.
var passLine = regexp.MustCompile(`mpi4py-interop: rank (\d+) of (\d+) PASS`)

// TestMpi4pyInterop builds the mpi4py bridge (examples/mpi4py, the one
// C shared library Hataori has for mpi4py) with the test binary's backend and runs testdata/mpi4py_interop.py under Open
// MPI's mpirun with 2 and 4 ranks: mpi4py initialises MPI and hands a
// communicator it duplicated to Hataori's Pmap (MPI-only and with a
// domain), Gather and Broadcast, and checks results, errors, the thread
// rule and that Hataori neither finalises MPI nor frees the communicator.
//
// Debian's python3-mpi4py is built on Open MPI and there is none for
// MPICH, so the test runs only with Open MPI: under mpirt through the Open
// MPI wrapper (HATAORI_WRAPPER_OPENMPI), under mpicgo only when the cgo
// backend links Open MPI (CC=mpicc).
func TestMpi4pyInterop(t *testing.T) {
	backend := hataori.Backend()
	var cc, why string
	env := append(os.Environ(),
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_rmaps_base_oversubscribe=1", "PYTHONDONTWRITEBYTECODE=1")
	switch backend {
	case "mpicgo":
		if linked := mpi.LinkedMPI(); linked != "openmpi" {
			t.Skipf("the cgo backend is linked against %s; this test runs only with Open MPI "+
				"(Debian's python3-mpi4py is built on Open MPI, there is none for MPICH): build with CC=mpicc", linked)
		}
		cc, why = findCC("mpicc")
	case "mpirt":
		wrapper := os.Getenv("HATAORI_WRAPPER_OPENMPI")
		if wrapper == "" {
			unavailable(t, `HATAORI_WRAPPER_OPENMPI is not set: build the wrappers with eval "$(scripts/build-wrappers.sh)" `+
				"(the test runs only with Open MPI: Debian's python3-mpi4py is built on it, there is none for MPICH)")
		}
		if _, err := os.Stat(wrapper); err != nil {
			unavailable(t, fmt.Sprintf("HATAORI_WRAPPER_OPENMPI: %v", err))
		}
		env = append(env, "MPI_RT_LIB="+wrapper)
		cc, why = findCC("gcc", "cc")
	default:
		t.Fatalf("backend %q: this test needs the build tag mpirt or mpicgo", backend)
	}
	if why != "" {
		unavailable(t, why)
	}
	python, why := findPython()
	if why != "" {
		unavailable(t, why)
	}
	mpirun, why := findMpirun()
	if why != "" {
		unavailable(t, why)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "mpi4py_interop.py"))
	if err != nil {
		t.Fatal(err)
	}
	lib := buildLibrary(t, cc)

	for _, n := range []int{2, 4} {
		t.Run("n="+strconv.Itoa(n), func(t *testing.T) {
			args := []string{"--oversubscribe", "-n", strconv.Itoa(n), python, script, lib, strconv.Itoa(n)}
			out, err := run(jobTimeout, env, mpirun, args...)
			if strings.Contains(out, "mpi4py-interop: SKIP") {
				unavailable(t, "the script cannot run here:\n"+out)
			}
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", mpirun, strings.Join(args, " "), err, out)
			}
			if why := checkPasses(out, n); why != "" {
				t.Fatalf("%s\n%s", why, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "mpi4py-interop: Pmap") {
					t.Log(strings.TrimSpace(line))
				}
			}
		})
	}
}

// checkPasses returns "" when out holds exactly one PASS line for every
// rank 0..n-1 of an n-rank job, or what is wrong.
func checkPasses(out string, n int) string {
	seen := make(map[int]int)
	for _, m := range passLine.FindAllStringSubmatch(out, -1) {
		r, _ := strconv.Atoi(m[1])
		size, _ := strconv.Atoi(m[2])
		if size != n || r < 0 || r >= n {
			return fmt.Sprintf("unexpected PASS line %q in a %d-rank job", m[0], n)
		}
		seen[r]++
	}
	for r := range n {
		if seen[r] != 1 {
			return fmt.Sprintf("rank %d printed %d PASS lines, want 1", r, seen[r])
		}
	}
	return ""
}
