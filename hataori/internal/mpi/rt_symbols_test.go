//go:build mpirt && !mpicgo

package mpi

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/mpiabi"
)

// A library without the nonblocking collectives the control collectives
// need is refused with a *mpiabi.LoadError naming them (mpiabi's fake
// fixture has none of them). The wrappers this project builds pass it in
// every multi-rank test, which could not load them otherwise.
func TestCollectiveSymbolsRequired(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: cannot build the fixture library")
	}
	out := filepath.Join(t.TempDir(), "fake.so")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if b, err := exec.CommandContext(ctx, gcc, "-O", "-fPIC", "-shared", "-o", out, "../../../mpiabi/testdata/fake.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, b)
	}
	l, err := mpiabi.Open(out)
	if err != nil {
		t.Fatalf("Open(fake) = %v", err)
	}
	_, err = checkCollectiveSymbols(l)
	var le *mpiabi.LoadError
	if !errors.As(err, &le) || !errors.Is(err, mpiabi.ErrMissingSymbol) || !strings.Contains(le.Symbol, "MPIABI_Iallreduce") {
		t.Fatalf("checkCollectiveSymbols(fake) = %v; want a *LoadError naming MPIABI_Iallreduce and matching ErrMissingSymbol", err)
	}
}
