package mpiabi_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/mpiabi"
)

// Environment of the singleton children.
const (
	childVar  = "MPIABI_TEST_CHILD"  // case to run inside the child
	familyVar = "MPIABI_TEST_FAMILY" // "openmpi" or "mpich"
	childOK   = "MPIABI-CHILD-OK"    // printed by a child that passed
)

// wrappers are the real MPIABI libraries the singleton tests use, named by
// the variables scripts/build-wrappers.sh prints.
var wrappers = []struct{ family, envVar string }{
	{"openmpi", "HATAORI_WRAPPER_OPENMPI"},
	{"mpich", "HATAORI_WRAPPER_MPICH"},
}

// singletonCases run, one per process, inside a child: MPI can be
// initialised only once per process.
var singletonCases = map[string]func(t *testing.T, l *mpiabi.Lib, family string){
	"basics": childBasics,
	"p2p":    childP2P,
	"nonblk": childNonblocking,
	"allocs": childAllocs,
	// libversion runs ExampleLib_LibraryVersion (the parent reads what it
	// prints): Load caches the first library, so each library needs a
	// process of its own.
	"libversion": func(*testing.T, *mpiabi.Lib, string) { ExampleLib_LibraryVersion() },
}

// TestSingleton runs every singleton case against every configured wrapper,
// each in a re-executed copy of this test binary (no mpirun: both MPIs
// initialise a singleton of size 1).
func TestSingleton(t *testing.T) {
	if os.Getenv(childVar) != "" {
		t.Skip("inside a child")
	}
	for _, w := range wrappers {
		t.Run(w.family, func(t *testing.T) {
			path := os.Getenv(w.envVar)
			if path == "" {
				if os.Getenv("HATAORI_REQUIRE_MPI") == "1" {
					t.Fatalf("%s is not set and HATAORI_REQUIRE_MPI=1 (run scripts/build-wrappers.sh and export its output)", w.envVar)
				}
				t.Skipf("%s is not set: run eval \"$(scripts/build-wrappers.sh)\" to test against the %s wrapper", w.envVar, w.family)
			}
			for _, name := range []string{"basics", "p2p", "nonblk", "allocs", "libversion"} {
				t.Run(name, func(t *testing.T) {
					if name == "allocs" && raceEnabled {
						t.Skip("allocation counts are not meaningful under -race (sync.Pool drops items)")
					}
					out := runChild(t, path, w.family, name)
					if want := map[string]string{"openmpi": wrapsOpenMPI, "mpich": wrapsMPICH}[w.family]; name == "libversion" && !strings.Contains(out, want) {
						t.Errorf("ExampleLib_LibraryVersion through the %s wrapper printed\n%s\nwant %q", w.family, out, want)
					}
				})
			}
		})
	}
}

// runChild re-executes the test binary to run one case, bounded by a
// timeout, and returns what the child printed.
func runChild(t *testing.T, lib, family, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSingletonChild$", "-test.v", "-test.count=1")
	var env []string
	for _, kv := range os.Environ() {
		// A child must not believe it was started by a launcher.
		if strings.HasPrefix(kv, "OMPI_COMM_WORLD") || strings.HasPrefix(kv, "PMI_") || strings.HasPrefix(kv, "PMIX_") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, mpiabi.EnvVar+"="+lib, childVar+"="+name, familyVar+"="+family,
		"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("child %s/%s timed out:\n%s", family, name, out.String())
	}
	if err != nil || !strings.Contains(out.String(), childOK+" "+name) {
		t.Fatalf("child %s/%s failed (%v):\n%s", family, name, err, out.String())
	}
	t.Logf("child %s/%s passed", family, name)
	return out.String()
}

// TestSingletonChild is the body of a child process; it skips otherwise.
func TestSingletonChild(t *testing.T) {
	name := os.Getenv(childVar)
	if name == "" {
		t.Skip("only runs as a child of TestSingleton")
	}
	f := singletonCases[name]
	if f == nil {
		t.Fatalf("unknown case %q", name)
	}
	l, err := mpiabi.Load()
	if err != nil {
		t.Fatal(err)
	}
	f(t, l, os.Getenv(familyVar))
	if !t.Failed() {
		fmt.Println(childOK, name)
	}
}
