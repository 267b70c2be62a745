package mpiabi_test

import (
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
)

// openFake opens testdata/fake.c, a library with unusual constant values
// and scripted behaviour, so the plumbing is tested without MPI.
func openFake(t *testing.T) *mpiabi.Lib {
	t.Helper()
	l, err := mpiabi.Open(buildFixture(t, "fake.c", nil))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestFakeConstants(t *testing.T) {
	l := openFake(t)
	if l.VersionMajor != 2 || l.VersionMinor != 10 || l.VersionPatch != 3 || l.Build != "fake MPIABI fixture" {
		t.Errorf("version %d.%d.%d %q", l.VersionMajor, l.VersionMinor, l.VersionPatch, l.Build)
	}
	handles := []struct {
		name      string
		got, want uintptr
	}{
		{"CommWorld", uintptr(l.CommWorld), 0x1001}, {"CommSelf", uintptr(l.CommSelf), 0x1002},
		{"CommNull", uintptr(l.CommNull), 0x1000},
		{"Byte", uintptr(l.Byte), 0x2001}, {"Char", uintptr(l.Char), 0x2002}, {"Int", uintptr(l.Int), 0x2003},
		{"Int32", uintptr(l.Int32), 0x2004}, {"Int64", uintptr(l.Int64), 0x2005},
		{"Uint64", uintptr(l.Uint64), 0x2006}, {"Double", uintptr(l.Double), 0x2007},
		{"Float", uintptr(l.Float), 0x2008},
		{"Min", uintptr(l.Min), 0x3001}, {"Max", uintptr(l.Max), 0x3002}, {"Sum", uintptr(l.Sum), 0x3003},
		{"StatusIgnore", l.StatusIgnore, 0x99}, {"RequestNull", uintptr(l.RequestNull), 0x4000},
		{"ErrorsReturn", uintptr(l.ErrorsReturn), 0x5001},
	}
	for _, h := range handles {
		if h.got != h.want {
			t.Errorf("%s = %#x, want %#x", h.name, h.got, h.want)
		}
	}
	ints := []struct {
		name      string
		got, want int
	}{
		{"AnySource", l.AnySource, -7}, {"AnyTag", l.AnyTag, -8}, {"ProcNull", l.ProcNull, -9},
		{"ThreadSingle", l.ThreadSingle, 10}, {"ThreadFunneled", l.ThreadFunneled, 11},
		{"ThreadSerialized", l.ThreadSerialized, 12}, {"ThreadMultiple", l.ThreadMultiple, 13},
		{"Success", l.Success, 0},
	}
	for _, i := range ints {
		if i.got != i.want {
			t.Errorf("%s = %d, want %d", i.name, i.got, i.want)
		}
	}
}

func TestFakeCalls(t *testing.T) {
	l := openFake(t)
	if ok, err := l.Initialized(); ok || err != nil {
		t.Errorf("Initialized before init = %v, %v", ok, err)
	}
	if p, err := l.InitThread(l.ThreadFunneled); p != l.ThreadFunneled+1 || err != nil {
		t.Errorf("InitThread = %d, %v; want %d", p, err, l.ThreadFunneled+1)
	}
	if ok, err := l.Initialized(); !ok || err != nil {
		t.Errorf("Initialized after init = %v, %v", ok, err)
	}
	if p, err := l.QueryThread(); p != 12 || err != nil {
		t.Errorf("QueryThread = %d, %v", p, err)
	}
	if ok, err := l.IsThreadMain(); !ok || err != nil {
		t.Errorf("IsThreadMain = %v, %v", ok, err)
	}
	d, err := l.CommDup(l.CommWorld)
	if d != l.CommWorld+0x10 || err != nil {
		t.Errorf("CommDup = %#x, %v", d, err)
	}
	if r, err := l.CommRank(d); r != 5 || err != nil {
		t.Errorf("CommRank(dup) = %d, %v", r, err)
	}
	if err := l.CommSetErrhandler(d, l.ErrorsReturn); err != nil {
		t.Errorf("CommSetErrhandler(dup, ErrorsReturn): %v", err)
	}
	if err := l.CommFree(&d); d != l.CommNull || err != nil {
		t.Errorf("CommFree left %#x, %v", d, err)
	}
	if s, err := l.CommSize(l.CommWorld); s != 1 || err != nil {
		t.Errorf("CommSize = %d, %v", s, err)
	}
	in := []int64{-3, math.MinInt64, 7}
	out := make([]int64, 3)
	if err := l.Allreduce(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), 3, l.Int64, l.Min, l.CommWorld); err != nil || out[1] != math.MinInt64 || out[0] != -3 {
		t.Errorf("Allreduce = %v, %v", out, err)
	}
	if err := l.Bcast(nil, 0, l.Byte, 0, l.CommWorld); err != nil {
		t.Errorf("Bcast: %v", err)
	}
	if err := l.Barrier(l.CommWorld); err != nil {
		t.Errorf("Barrier: %v", err)
	}
	if w := l.Wtime(); w != 12.5 {
		t.Errorf("Wtime = %v, want 12.5 (float return)", w)
	}
	v, err := l.LibraryVersion()
	if err != nil || !strings.HasPrefix(v, "MPICH Version: 0.0.0-fake") {
		t.Errorf("LibraryVersion = %q, %v", v, err)
	}
	if err := l.Finalize(); err != nil {
		t.Error(err)
	}
	if ok, err := l.Finalized(); !ok || err != nil {
		t.Errorf("Finalized = %v, %v", ok, err)
	}
}

func TestFakeStatusLayout(t *testing.T) {
	l := openFake(t)
	buf := make([]byte, 24)
	var st mpiabi.Status
	if err := l.Recv(unsafe.Pointer(&buf[0]), len(buf), l.Byte, l.AnySource, l.AnyTag, l.CommWorld, &st); err != nil {
		t.Fatal(err)
	}
	if st.Source != 5 || st.Tag != 6 || st.Error != 0 || buf[23] != 7 {
		t.Errorf("status %+v, buf[23]=%d", st, buf[23])
	}
	if n, err := l.GetCount(&st, l.Int64); n != 3 || err != nil {
		t.Errorf("GetCount(int64) = %d, %v; want 3 from the native part", n, err)
	}
	// A nil status must reach the library as its STATUS_IGNORE (the fake
	// returns error 4 for NULL).
	if err := l.Recv(unsafe.Pointer(&buf[0]), 1, l.Byte, 2, 3, l.CommWorld, nil); err != nil {
		t.Errorf("Recv with nil status: %v", err)
	}
	if err := l.Probe(2, 3, l.CommWorld, nil); err != nil {
		t.Errorf("Probe with nil status: %v", err)
	}
	if err := l.Probe(2, 3, l.CommWorld, &st); err != nil || st.Source != 2 || st.Tag != 3 {
		t.Errorf("Probe = %+v, %v", st, err)
	}
	if ok, err := l.Iprobe(4, 0, l.CommWorld, &st); ok || err != nil {
		t.Errorf("Iprobe(tag 0) = %v, %v; want false", ok, err)
	}
	if ok, err := l.Iprobe(4, 1, l.CommWorld, &st); !ok || err != nil || st.Source != 4 || st.Tag != 1 {
		t.Errorf("Iprobe(tag 1) = %v, %+v, %v", ok, st, err)
	}
	if ok, err := l.Iprobe(4, 1, l.CommWorld, nil); !ok || err != nil {
		t.Errorf("Iprobe(tag 1, nil status) = %v, %v", ok, err)
	}
	if _, err := l.GetCount(nil, l.Byte); !errors.Is(err, mpiabi.ErrNilStatus) {
		t.Errorf("GetCount(nil) = %v", err)
	}
}

func TestFakeErrors(t *testing.T) {
	l := openFake(t)
	err := l.Send(nil, -1, l.Byte, 0, 0, l.CommWorld)
	var me *mpiabi.Error
	if !errors.As(err, &me) {
		t.Fatalf("Send(count -1) = %v, want *mpiabi.Error", err)
	}
	if me.Func != "MPIABI_Send" || me.Code != 3 || me.Text != "fake error 3" {
		t.Errorf("error %+v", me)
	}
	if want := "mpiabi: MPIABI_Send failed with MPI error code 3: fake error 3"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	if err := l.Recv(nil, -1, l.Byte, 0, 0, l.CommWorld, nil); err == nil || !strings.Contains(err.Error(), "MPIABI_Recv") {
		t.Errorf("Recv(count -1) = %v", err)
	}
	if err := l.Abort(l.CommWorld, 2); err == nil || !strings.Contains(err.Error(), "MPIABI_Abort") {
		t.Errorf("Abort = %v", err)
	}
	if err := l.CommFree(nil); err == nil {
		t.Error("CommFree(nil) returned nil")
	}
	// The handler handle reaches the library unchanged, and its error
	// comes back with the library's text.
	err = l.CommSetErrhandler(l.CommWorld, l.ErrorsReturn+1)
	if !errors.As(err, &me) || me.Func != "MPIABI_Comm_set_errhandler" || me.Code != 3 || me.Text != "fake error 3" {
		t.Errorf("CommSetErrhandler(other handler) = %v", err)
	}
	if err := l.CommSetErrhandler(l.CommNull, l.ErrorsReturn); !errors.As(err, &me) || me.Code != 5 {
		t.Errorf("CommSetErrhandler(CommNull) = %v", err)
	}
}

func TestFakeCheckLauncher(t *testing.T) {
	l := openFake(t)
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
		t.Setenv(v, "")
	}
	if err := l.CheckLauncher(l.CommWorld); err != nil {
		t.Errorf("CheckLauncher without launcher: %v", err)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	if err := l.CheckLauncher(l.CommWorld); err != nil {
		t.Errorf("CheckLauncher with matching size: %v", err)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "4")
	err := l.CheckLauncher(l.CommWorld)
	var le *mpiabi.LauncherError
	if !errors.As(err, &le) {
		t.Fatalf("CheckLauncher = %v, want *LauncherError", err)
	}
	if le.Var != "OMPI_COMM_WORLD_SIZE" || le.LauncherSize != 4 || le.CommSize != 1 || le.Library != "MPICH Version: 0.0.0-fake" {
		t.Errorf("%+v", le)
	}
	for _, w := range []string{"OMPI_COMM_WORLD_SIZE=4", "Open MPI's mpirun", "size 1", "wraps MPICH", "mpiexec.mpich", "set MPI_RT_LIB to a wrapper built for Open MPI"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message %q lacks %q", err, w)
		}
	}
}

func TestFakeIsendWait(t *testing.T) {
	l := openFake(t)
	b := []byte("x")
	req, err := l.Isend(unsafe.Pointer(&b[0]), 1, l.Byte, 0, 41, l.CommWorld)
	if err != nil || req != 0x4000+42 {
		t.Fatalf("Isend = %#x, %v", req, err)
	}
	var st mpiabi.Status
	if err := l.Wait(req, &st); err != nil || st.Tag != 41 {
		t.Errorf("Wait = %+v, %v", st, err)
	}
	if err := l.Wait(l.RequestNull, nil); err == nil {
		t.Error("Wait(RequestNull) on the fake should fail with code 3")
	}
}

func TestFakeHotPathsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race (sync.Pool drops items)")
	}
	checkHotPathAllocs(t, openFake(t), 0, false)
}

func TestOptionalFunctionsMissing(t *testing.T) {
	l, err := mpiabi.Open(buildFixture(t, "fake.c", []string{"MPIABI_Isend", "MPIABI_Wait", "MPIABI_Wtime", "MPIABI_Get_library_version", "MPIABI_Error_string", "MPIABI_REQUEST_NULL"}))
	if err != nil {
		t.Fatalf("optional symbols must not be required: %v", err)
	}
	if _, err := l.Isend(nil, 0, l.Byte, 0, 0, l.CommWorld); !errors.Is(err, mpiabi.ErrMissingSymbol) || !strings.Contains(err.Error(), "MPIABI_Isend") {
		t.Errorf("Isend without symbol = %v", err)
	}
	if err := l.Wait(0, nil); !errors.Is(err, mpiabi.ErrMissingSymbol) {
		t.Errorf("Wait without symbol = %v", err)
	}
	if _, err := l.LibraryVersion(); !errors.Is(err, mpiabi.ErrMissingSymbol) {
		t.Errorf("LibraryVersion without symbol = %v", err)
	}
	if w := l.Wtime(); w < 0 || w == 12.5 {
		t.Errorf("fallback Wtime = %v", w)
	}
	err = l.Send(nil, -1, l.Byte, 0, 0, l.CommWorld)
	var me *mpiabi.Error
	if !errors.As(err, &me) || me.Code != 3 || me.Text != "" {
		t.Errorf("error without Error_string = %#v", err)
	}
}

// Version strings as MPIwrapper 2.11.0 writes them: a line of its own, then
// the wrapped MPI's string.
const (
	mpiwrapperOpenMPI = "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:\n" +
		"Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
	mpiwrapperMPICH = "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:\n" +
		"MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\nMPICH Device:\tch4:ucx\n"
)

// What ExampleLib_LibraryVersion prints for each family.
const (
	wrapsOpenMPI = "wraps Open MPI: start with Open MPI's mpirun\n"
	wrapsMPICH   = "wraps MPICH: start with mpiexec.mpich\n"
)

// openFakeVersion opens the fake library with version as its library
// version string.
func openFakeVersion(t *testing.T, version string) (*mpiabi.Lib, string) {
	t.Helper()
	path := buildFixture(t, "fake.c", nil, "-DFAKE_VERSION="+strconv.Quote(version))
	l, err := mpiabi.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := l.LibraryVersion(); err != nil || v != version {
		t.Fatalf("fixture LibraryVersion = %q, %v; want %q", v, err, version)
	}
	return l, path
}

// TestFakeCheckLauncherMPIwrapper: under MPIwrapper the launcher error
// names the wrapped MPI (the version string's second line), not
// MPIwrapper's own first line, and pairs the launcher with it.
func TestFakeCheckLauncherMPIwrapper(t *testing.T) {
	for _, c := range []struct {
		version, library, launcher, wraps string
	}{
		{mpiwrapperOpenMPI, "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022", "PMI_SIZE", "wraps Open MPI: start the program with Open MPI's mpirun"},
		{mpiwrapperMPICH, "MPICH Version:\t4.0.2", "OMPI_COMM_WORLD_SIZE", "wraps MPICH: start the program with MPICH's mpiexec"},
	} {
		l, _ := openFakeVersion(t, c.version)
		for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"} {
			t.Setenv(v, "")
		}
		t.Setenv(c.launcher, "4")
		err := l.CheckLauncher(l.CommWorld)
		var le *mpiabi.LauncherError
		if !errors.As(err, &le) {
			t.Fatalf("CheckLauncher = %v, want *LauncherError", err)
		}
		if le.Library != c.library || !strings.Contains(le.Hint, c.wraps) {
			t.Errorf("CheckLauncher under %s: Library %q, Hint %q; want %q and a hint with %q", c.launcher, le.Library, le.Hint, c.library, c.wraps)
		}
	}
}

// TestFakeExampleLibraryVersion runs ExampleLib_LibraryVersion against
// libraries whose version strings are MPIwrapper's and the MPIs' own (each
// in a process of its own: Load caches the first library it opens).
func TestFakeExampleLibraryVersion(t *testing.T) {
	if os.Getenv(childVar) != "" {
		t.Skip("inside a child")
	}
	for _, c := range []struct {
		name, version, want string
	}{
		{"MPIwrapper over Open MPI", mpiwrapperOpenMPI, wrapsOpenMPI},
		{"MPIwrapper over MPICH", mpiwrapperMPICH, wrapsMPICH},
		{"Open MPI", "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022", wrapsOpenMPI},
		{"MPICH", "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n", wrapsMPICH},
		{"another MPI", "Intel(R) MPI Library 2021.6 for Linux* OS\n", "wraps Intel(R) MPI Library 2021.6 for Linux* OS\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, path := openFakeVersion(t, c.version)
			if out := runChild(t, path, "fake", "libversion"); !strings.Contains(out, c.want) {
				t.Errorf("ExampleLib_LibraryVersion printed\n%s\nwant %q", out, c.want)
			}
		})
	}
}
