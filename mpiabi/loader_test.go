package mpiabi_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/mpiabi"
)

// loadErr asserts that err is a *mpiabi.LoadError with the given stage and
// symbol, matching sentinel (if not nil), whose message contains every
// string in want.
func loadErr(t *testing.T, err error, stage, symbol string, sentinel error, want ...string) *mpiabi.LoadError {
	t.Helper()
	var le *mpiabi.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("got %T %v, want *mpiabi.LoadError", err, err)
	}
	if le.Stage != stage || le.Symbol != symbol {
		t.Errorf("Stage, Symbol = %q, %q; want %q, %q (%v)", le.Stage, le.Symbol, stage, symbol, err)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("errors.Is(%v, %v) = false", err, sentinel)
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q does not contain %q", msg, w)
		}
	}
	return le
}

func TestLoadUnset(t *testing.T) {
	t.Setenv(mpiabi.EnvVar, "")
	os.Unsetenv(mpiabi.EnvVar)
	l, err := mpiabi.Load()
	if l != nil {
		t.Fatalf("Load returned a library with %s unset", mpiabi.EnvVar)
	}
	le := loadErr(t, err, "env", "", mpiabi.ErrNotSet, "variable MPI_RT_LIB", "stage env", "MPI_RT_LIB is not set")
	if le.Var != "MPI_RT_LIB" {
		t.Errorf("Var = %q", le.Var)
	}
}

func TestOpenEmptyPath(t *testing.T) {
	_, err := mpiabi.Open("")
	loadErr(t, err, "open", "", mpiabi.ErrNotSet, "empty library path")
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "libmpiabi.so")
	t.Setenv(mpiabi.EnvVar, path)
	_, err := mpiabi.Load()
	le := loadErr(t, err, "open", "", fs.ErrNotExist, "variable MPI_RT_LIB", `path "`+path+`"`, "no such file")
	if le.Var != mpiabi.EnvVar || le.Path != path {
		t.Errorf("Var, Path = %q, %q", le.Var, le.Path)
	}
}

func TestOpenNotALibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "libtext.so")
	if err := os.WriteFile(path, []byte("this is a text file, not ELF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := mpiabi.Open(path)
	loadErr(t, err, "dlopen", "", nil, path, "not a loadable shared library")
}

func TestOpenUnknownName(t *testing.T) {
	_, err := mpiabi.Open("libhataori-does-not-exist.so")
	loadErr(t, err, "dlopen", "", nil, "libhataori-does-not-exist.so", "not a loadable shared library")
}

func TestOpenNativeLibMPI(t *testing.T) {
	var found bool
	for _, path := range []string{
		"/usr/lib/x86_64-linux-gnu/libmpi.so.40",    // Open MPI
		"/usr/lib/x86_64-linux-gnu/libmpich.so.12",  // MPICH
		"/usr/lib/x86_64-linux-gnu/libmpi.so",       // either, via alternatives
		"/usr/lib/aarch64-linux-gnu/libmpi.so.40",   // Open MPI on arm64
		"/usr/lib/aarch64-linux-gnu/libmpich.so.12", // MPICH on arm64
	} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		found = true
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := mpiabi.Open(path)
			loadErr(t, err, "version", "mpiabi_version_major", mpiabi.ErrNotMPIABI, path, "not an MPIABI 2.x library", "native libmpi.so cannot be used directly")
		})
	}
	if !found {
		if os.Getenv("HATAORI_REQUIRE_MPI") == "1" {
			t.Fatal("no native libmpi found and HATAORI_REQUIRE_MPI=1")
		}
		t.Skip("no native libmpi.so installed")
	}
}

func TestOpenVtableOnly(t *testing.T) {
	path := buildFixture(t, "vtable.c", nil)
	_, err := mpiabi.Open(path)
	le := loadErr(t, err, "version", "mpiabi_version_major", mpiabi.ErrVtableOnly, path, "mpiwrapper_get_vtable", "not MPIwrapper 2.x")
	if errors.Is(le, mpiabi.ErrNotMPIABI) {
		t.Error("a vtable-only library should not also match ErrNotMPIABI")
	}
}

func TestOpenWrongMajor(t *testing.T) {
	path := buildFixture(t, "fake.c", nil, "-DFAKE_MAJOR=3")
	_, err := mpiabi.Open(path)
	loadErr(t, err, "version", "mpiabi_version_major", mpiabi.ErrVersion, path, "need 2", "MPIABI 3.10.3")
}

func TestOpenNoVersionSymbols(t *testing.T) {
	path := buildFixture(t, "fake.c", []string{"mpiabi_version_major"})
	_, err := mpiabi.Open(path)
	loadErr(t, err, "version", "mpiabi_version_major", mpiabi.ErrNotMPIABI, path)
}

func TestOpenMissingSymbol(t *testing.T) {
	for _, sym := range []string{"MPIABI_Iprobe", "MPIABI_Init_thread", "MPIABI_STATUS_IGNORE", "MPIABI_ANY_SOURCE", "MPIABI_INT64_T",
		"MPIABI_Comm_set_errhandler", "MPIABI_ERRORS_RETURN"} {
		t.Run(sym, func(t *testing.T) {
			path := buildFixture(t, "fake.c", []string{sym})
			_, err := mpiabi.Open(path)
			loadErr(t, err, "dlsym", sym, mpiabi.ErrMissingSymbol, path, "symbol "+sym, "symbol not found")
		})
	}
}

func TestLoadMissingSymbolNamesVariable(t *testing.T) {
	path := buildFixture(t, "fake.c", []string{"MPIABI_Recv"})
	t.Setenv(mpiabi.EnvVar, path)
	_, err := mpiabi.Load()
	loadErr(t, err, "dlsym", "MPIABI_Recv", mpiabi.ErrMissingSymbol, "variable MPI_RT_LIB", path, "MPIABI_Recv")
}

func TestOpenSetsUCXHandleErrors(t *testing.T) {
	t.Setenv("UCX_HANDLE_ERRORS", "")
	os.Unsetenv("UCX_HANDLE_ERRORS")
	_, _ = mpiabi.Open(filepath.Join(t.TempDir(), "missing.so"))
	if got := os.Getenv("UCX_HANDLE_ERRORS"); got != "none" {
		t.Errorf("UCX_HANDLE_ERRORS = %q after Open, want none", got)
	}
	t.Setenv("UCX_HANDLE_ERRORS", "bt")
	_, _ = mpiabi.Open(filepath.Join(t.TempDir(), "missing.so"))
	if got := os.Getenv("UCX_HANDLE_ERRORS"); got != "bt" {
		t.Errorf("Open overrode the user's UCX_HANDLE_ERRORS: %q", got)
	}
}

func TestOpenMPI5ABI(t *testing.T) {
	path := buildFixture(t, "mpi5.c", nil)
	_, err := mpiabi.Open(path)
	loadErr(t, err, "version", "mpiabi_version_major", mpiabi.ErrNotMPIABI, path, "MPI_Abi_get_version", "MPI-5 standard-ABI")
}
