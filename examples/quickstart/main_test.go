package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori"
)

// TestREADMEShowsThisFile checks that the README's quick-start program is
// this file, byte for byte: the README shows main.go in a ```go block, so
// an edit to either that is not made to the other fails here.
func TestREADMEShowsThisFile(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(readme, []byte("```go\n"+string(src)+"```\n")) {
		return
	}
	// Find the block that starts like main.go and name its first difference.
	first, _, _ := strings.Cut(string(src), "\n")
	_, block, found := strings.Cut(string(readme), "```go\n"+first+"\n")
	if !found {
		t.Fatalf("README.md has no ```go block starting with %q: paste examples/quickstart/main.go into it", first)
	}
	block, _, _ = strings.Cut(first+"\n"+block, "```\n")
	want, got := strings.Split(string(src), "\n"), strings.Split(block, "\n")
	for i := range max(len(want), len(got)) {
		w, g := "(end of block)", "(end of block)"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			t.Fatalf("README.md's quick-start block differs from examples/quickstart/main.go at line %d:\n README:  %q\n main.go: %q", i+1, g, w)
		}
	}
	t.Fatal("README.md's quick-start block differs from examples/quickstart/main.go")
}

// TestMainWithoutMPI runs the program (main, in a child process: the test
// binary again) in a build without an MPI backend: InitThread returns
// ErrNoMPI, and the program computes locally, prints its line and exits 0.
func TestMainWithoutMPI(t *testing.T) {
	if os.Getenv("QUICKSTART_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	if b := hataori.Backend(); b != "none" {
		t.Skipf("backend %s: the MPI run is checked under mpirun by scripts/test.sh", b)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainWithoutMPI$")
	cmd.Env = append(os.Environ(), "QUICKSTART_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("quickstart: %v; stderr: %s", err, stderr.Bytes())
	}
	const want = "sum of squares of 1..1000: 333833500 (no MPI: "
	if !strings.HasPrefix(string(out), want) || strings.Count(string(out), "\n") != 1 {
		t.Errorf("quickstart printed %q, want one line starting with %q", out, want)
	}
}
