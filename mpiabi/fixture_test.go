package mpiabi_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildFixture compiles testdata/<src> with gcc into a shared library in a
// temporary directory, hiding the symbols in hide with a linker version
// script, and returns its path. It skips the test when gcc is missing.
func buildFixture(t testing.TB, src string, hide []string, cflags ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build the loader's fixture libraries")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, strings.TrimSuffix(src, ".c")+".so")
	args := []string{"-O", "-fPIC", "-shared", "-o", out}
	args = append(args, cflags...)
	if len(hide) > 0 {
		script := filepath.Join(dir, "hide.map")
		body := "{ global: *; local: " + strings.Join(hide, "; ") + "; };\n"
		if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-Wl,--version-script="+script)
	}
	abs, err := filepath.Abs(filepath.Join("testdata", src))
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, abs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}
