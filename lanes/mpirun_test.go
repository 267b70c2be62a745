//go:build mpirt || mpicgo

package lanes_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A small self-contained multi-rank harness (hataori/internal/mpitest is not
// importable from here): a parent test re-executes this test binary under
// each MPI launcher usable with the build's backend, with a hard timeout
// that kills the job's whole process group; the children, marked by
// childEnv, run the rank code and print rankOK once their checks passed.

const (
	childEnv   = "HATAORI_LANES_CHILD"
	requireEnv = "HATAORI_REQUIRE_MPI"
	rankOK     = "HATAORI_LANES_RANK_OK"
	jobTimeout = 3 * time.Minute
)

// isChild reports whether this process is a rank of a job started by runRanks.
func isChild() bool { return os.Getenv(childEnv) == "1" }

// launcher is one MPI's job launcher.
type launcher struct {
	name       string   // "openmpi" or "mpich"
	bin        string   // launcher executable
	wrapperEnv string   // variable naming this MPI's MPIABI wrapper (mpirt)
	env        []string // added to the job's environment
	args       func(n int) []string
}

var launchers = []launcher{
	{
		name: "openmpi", bin: "mpirun", wrapperEnv: "HATAORI_WRAPPER_OPENMPI",
		env: []string{"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"},
		args: func(n int) []string {
			return []string{"--oversubscribe", "--tag-output", "-n", strconv.Itoa(n)}
		},
	},
	{
		name: "mpich", bin: "mpiexec.mpich", wrapperEnv: "HATAORI_WRAPPER_MPICH",
		env:  []string{"UCX_HANDLE_ERRORS=none"},
		args: func(n int) []string { return []string{"-l", "-n", strconv.Itoa(n)} },
	},
}

// buildLaunchers returns the launchers usable with this build: both under
// the run-time backend; under the cgo backend, the launcher of the MPI the
// binary is linked against (read from its own memory map).
func buildLaunchers(t *testing.T) []launcher {
	if testBackend == "mpirt" {
		return launchers
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatalf("cannot tell which MPI this binary is linked against: %v", err)
	}
	switch {
	case bytes.Contains(maps, []byte("libmpich")):
		return launchers[1:]
	case bytes.Contains(maps, []byte("libmpi.so")):
		return launchers[:1]
	}
	t.Fatal("cgo backend, but neither libmpi.so (Open MPI) nor libmpich is mapped")
	return nil
}

// skipOrFail skips when MPI is missing, unless HATAORI_REQUIRE_MPI=1.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// runRanks runs test (a top-level test of this binary) as an n-rank job
// under every usable launcher, each as a subtest, and checks that every rank
// reported rankOK. env is added to the children's environment.
func runRanks(t *testing.T, n int, test string, env ...string) {
	t.Helper()
	for _, la := range buildLaunchers(t) {
		t.Run(fmt.Sprintf("%s-n%d", la.name, n), func(t *testing.T) {
			if _, err := exec.LookPath(la.bin); err != nil {
				skipOrFail(t, "MPI not available: %s not found", la.bin)
			}
			jobEnv := append(os.Environ(), childEnv+"=1")
			jobEnv = append(jobEnv, la.env...)
			jobEnv = append(jobEnv, env...)
			if testBackend == "mpirt" {
				lib := os.Getenv(la.wrapperEnv)
				if lib == "" {
					skipOrFail(t, "MPI not available: %s is not set (eval \"$(scripts/build-wrappers.sh)\")", la.wrapperEnv)
				}
				jobEnv = append(jobEnv, "MPI_RT_LIB="+lib)
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			args := append(la.args(n), self, "-test.run=^"+test+"$", "-test.count=1", "-test.v",
				fmt.Sprintf("-test.timeout=%v", jobTimeout*9/10))
			out, err := runJob(la.bin, args, jobEnv, jobTimeout)
			if err != nil {
				t.Fatalf("%s -n %d: %v\n%s", la.bin, n, err, out)
			}
			if got := strings.Count(out, rankOK); got != n {
				t.Fatalf("%d of %d ranks reported success\n%s", got, n, out)
			}
		})
	}
}

// runJob runs bin args in a process group of its own and kills the whole
// group if it outlives timeout (the children's own -test.timeout, shorter,
// fires first and dumps their goroutines).
func runJob(bin string, args, env []string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("job killed after the %v timeout: %w", timeout, err)
	}
	return out.String(), err
}
