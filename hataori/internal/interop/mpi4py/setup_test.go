//go:build (mpirt || mpicgo) && linux

package mpi4py

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// Limits of the external commands the test runs.
const (
	probeTimeout = 30 * time.Second // python3 -c 'import mpi4py', mpirun --version
	buildTimeout = 5 * time.Minute  // go build -buildmode=c-shared (cold cache)
	jobTimeout   = 2 * time.Minute  // one mpirun job
)

// requireEnv set to "1" turns a missing prerequisite into a failure.
const requireEnv = "HATAORI_REQUIRE_MPI"

// unavailable skips t with why, or fails it when HATAORI_REQUIRE_MPI=1.
func unavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv(requireEnv) == "1" {
		t.Fatalf("mpi4py interop is required (%s=1) but cannot run: %s", requireEnv, why)
	}
	t.Skipf("mpi4py interop skipped: %s (set %s=1 to make this a failure)", why, requireEnv)
}

// command returns a command for name and args, bounded by ctx, that runs
// in its own session: when ctx ends everything it started is stopped
// (mpirun and every rank, or go build and its compilers; see mpitest.Contain).
func command(ctx context.Context, env []string, name string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	mpitest.Contain(cmd)
	cmd.WaitDelay = 8 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// run runs name with args under a timeout and returns its combined output
// and an error that says whether the timeout struck.
func run(timeout time.Duration, env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd, out := command(ctx, env, name, args...)
	err := cmd.Run()
	// Whatever outlived the command (a rank whose mpirun died) goes too.
	mpitest.Reap(cmd)
	if ctx.Err() != nil {
		err = fmt.Errorf("killed after %v: %w", timeout, errors.Join(err, ctx.Err()))
	}
	return out.String(), err
}

// findPython returns a Python interpreter that imports mpi4py: the one
// named by HATAORI_PYTHON, else python3 on PATH, else /usr/bin/python3
// (where Debian's python3-mpi4py installs), or why there is none.
func findPython() (string, string) {
	var cands []string
	if p := os.Getenv("HATAORI_PYTHON"); p != "" {
		cands = append(cands, p)
	}
	cands = append(cands, "python3", "/usr/bin/python3")
	var tried []string
	for _, c := range cands {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if _, err := run(probeTimeout, os.Environ(), p, "-c", "import mpi4py"); err == nil {
			return p, ""
		}
		tried = append(tried, p)
	}
	return "", fmt.Sprintf("no Python with mpi4py (tried %s): install Debian's python3-mpi4py "+
		"(apt-get install python3-mpi4py; built on Open MPI)", strings.Join(tried, ", "))
}

// findMpirun returns Open MPI's launcher, or why there is none.
func findMpirun() (string, string) {
	for _, c := range []string{"mpirun.openmpi", "mpirun"} {
		p, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if out, err := run(probeTimeout, os.Environ(), p, "--version"); err == nil && strings.Contains(out, "Open MPI") {
			return p, ""
		}
	}
	return "", "Open MPI's mpirun not found (install openmpi-bin)"
}

// buildTags returns the -tags this test binary was built with (so the
// library gets the same backend and debug checks), or "".
func buildTags() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "-tags" {
			return s.Value
		}
	}
	return ""
}

// buildEnv returns the environment of the nested go build: the test's own
// (GOCACHE, GOPATH, GOFLAGS, CGO_* flags are kept, so the build reuses the
// cache), without GOFLAGS entries a C shared library cannot take (-race,
// the sanitizers, coverage), with cgo on and compiler cc.
func buildEnv(cc string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "CGO_ENABLED", "CC":
			continue
		case "GOFLAGS":
			var keep []string
			for _, f := range strings.Fields(v) {
				if !strings.HasPrefix(f, "-race") && !strings.HasPrefix(f, "-msan") &&
					!strings.HasPrefix(f, "-asan") && !strings.HasPrefix(f, "-cover") {
					keep = append(keep, f)
				}
			}
			kv = "GOFLAGS=" + strings.Join(keep, " ")
		}
		env = append(env, kv)
	}
	return append(env, "CGO_ENABLED=1", "CC="+cc)
}

// findCC returns the C compiler for the nested build: $CC when it exists,
// else the first of fallbacks found, or why there is none.
func findCC(fallbacks ...string) (string, string) {
	cands := fallbacks
	if cc := strings.Fields(os.Getenv("CC")); len(cc) > 0 {
		cands = append([]string{cc[0]}, fallbacks...)
	}
	for _, c := range cands {
		if p, err := exec.LookPath(c); err == nil {
			return p, ""
		}
	}
	return "", fmt.Sprintf("-buildmode=c-shared needs cgo and a C compiler; none of %s found", strings.Join(cands, ", "))
}

// bridgePackage is the mpi4py bridge the test builds: the example's C
// shared library, whose exports interop.go holds the test's hooks.
const bridgePackage = "github.com/hataori/hataori-go/examples/mpi4py"

// buildLibrary builds bridgePackage as a C shared library into a temporary
// directory with the test binary's tags and returns its path.
func buildLibrary(t *testing.T, cc string) string {
	t.Helper()
	goTool, err := exec.LookPath("go") // go test puts its own GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	lib := filepath.Join(t.TempDir(), "libhataori_mpi4py.so")
	args := []string{"build", "-buildmode=c-shared", "-o", lib}
	if tags := buildTags(); tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, bridgePackage)
	start := time.Now()
	out, err := run(buildTimeout, buildEnv(cc), goTool, args...)
	if err != nil {
		t.Fatalf("go %s (CC=%s): %v\n%s", strings.Join(args, " "), cc, err, out)
	}
	t.Logf("built %s (go %s, CC=%s) in %v", lib, strings.Join(args, " "), cc, time.Since(start).Round(time.Millisecond))
	return lib
}
