package mpiabi_test

import (
	"errors"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/mpiabi/launch"
)

// initChild locks the test goroutine to its thread and initialises MPI at
// THREAD_FUNNELED; it registers Finalize as cleanup.
func initChild(t *testing.T, l *mpiabi.Lib) int {
	t.Helper()
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	provided, err := l.InitThread(l.ThreadFunneled)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Finalize(); err != nil {
			t.Error(err)
		}
	})
	return provided
}

// childBasics: constants, initialisation, threads, communicators,
// collectives and the launcher check on a singleton.
func childBasics(t *testing.T, l *mpiabi.Lib, family string) {
	checkFamilyConstants(t, l, family)
	if ok, err := l.Initialized(); ok || err != nil {
		t.Errorf("Initialized before init = %v, %v", ok, err)
	}
	provided := initChild(t, l)
	if provided < l.ThreadFunneled || provided > l.ThreadMultiple {
		t.Errorf("InitThread(FUNNELED=%d) provided %d", l.ThreadFunneled, provided)
	}
	if ok, err := l.Initialized(); !ok || err != nil {
		t.Errorf("Initialized after init = %v, %v", ok, err)
	}
	if q, err := l.QueryThread(); q != provided || err != nil {
		t.Errorf("QueryThread = %d, %v; want %d", q, err, provided)
	}
	if ok, err := l.IsThreadMain(); !ok || err != nil {
		t.Errorf("IsThreadMain on the initialising thread = %v, %v", ok, err)
	}
	other := make(chan bool)
	go func() {
		// A different OS thread, handed back when done (a thread that
		// ends after MPI calls is TestLockedThreadExitAfterCall's case).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ok, _ := l.IsThreadMain()
		other <- ok
	}()
	if <-other {
		t.Error("IsThreadMain on another locked thread = true")
	}
	for _, c := range []mpiabi.Comm{l.CommWorld, l.CommSelf} {
		r, err1 := l.CommRank(c)
		s, err2 := l.CommSize(c)
		if r != 0 || s != 1 || err1 != nil || err2 != nil {
			t.Errorf("comm %#x: rank %d size %d (%v, %v)", c, r, s, err1, err2)
		}
	}
	d, err := l.CommDup(l.CommWorld)
	if err != nil || d == l.CommNull || d == l.CommWorld {
		t.Fatalf("CommDup = %#x, %v", d, err)
	}
	if s, err := l.CommSize(d); s != 1 || err != nil {
		t.Errorf("CommSize(dup) = %d, %v", s, err)
	}
	if err := l.CommFree(&d); err != nil || d != l.CommNull {
		t.Errorf("CommFree: %v, left %#x (CommNull %#x)", err, d, l.CommNull)
	}

	i32 := []int32{-1, math.MinInt32, 5, math.MaxInt32}
	o32 := make([]int32, len(i32))
	if err := l.Allreduce(unsafe.Pointer(&i32[0]), unsafe.Pointer(&o32[0]), len(i32), l.Int32, l.Min, l.CommWorld); err != nil {
		t.Fatal(err)
	}
	i64 := []int64{-7, math.MinInt64, 1 << 40, math.MaxInt64}
	o64 := make([]int64, len(i64))
	if err := l.Allreduce(unsafe.Pointer(&i64[0]), unsafe.Pointer(&o64[0]), len(i64), l.Int64, l.Min, l.CommWorld); err != nil {
		t.Fatal(err)
	}
	for i := range i32 {
		if o32[i] != i32[i] {
			t.Errorf("MIN int32 %v -> %v", i32, o32)
		}
	}
	for i := range i64 {
		if o64[i] != i64[i] {
			t.Errorf("MIN int64 %v -> %v", i64, o64)
		}
	}
	ci := []int32{-3}
	co := []int32{0}
	if err := l.Allreduce(unsafe.Pointer(&ci[0]), unsafe.Pointer(&co[0]), 1, l.Int, l.Sum, l.CommSelf); err != nil || co[0] != -3 {
		t.Errorf("SUM int = %d, %v", co[0], err)
	}
	f := []float64{-2.5}
	fo := []float64{0}
	if err := l.Allreduce(unsafe.Pointer(&f[0]), unsafe.Pointer(&fo[0]), 1, l.Double, l.Max, l.CommWorld); err != nil || fo[0] != -2.5 {
		t.Errorf("MAX double = %v, %v", fo[0], err)
	}
	b := []byte("bcast")
	if err := l.Bcast(unsafe.Pointer(&b[0]), len(b), l.Byte, 0, l.CommWorld); err != nil || string(b) != "bcast" {
		t.Errorf("Bcast = %q, %v", b, err)
	}
	if err := l.Barrier(l.CommWorld); err != nil {
		t.Error(err)
	}
	if t1, t2 := l.Wtime(), l.Wtime(); t1 < 0 || t2 < t1 {
		t.Errorf("Wtime %v then %v", t1, t2)
	}

	if err := l.CheckLauncher(l.CommWorld); err != nil {
		t.Errorf("CheckLauncher in a singleton: %v", err)
	}
	// Simulate the other MPI's launcher: it announces 3 ranks, we have 1.
	other3 := map[string]string{"openmpi": "PMI_SIZE", "mpich": "OMPI_COMM_WORLD_SIZE"}[family]
	os.Setenv(other3, "3")
	err = l.CheckLauncher(l.CommWorld)
	os.Unsetenv(other3)
	var le *mpiabi.LauncherError
	if !errors.As(err, &le) || le.LauncherSize != 3 || le.CommSize != 1 || le.Var != other3 {
		t.Fatalf("CheckLauncher with %s=3 = %v", other3, err)
	}
	want := map[string]string{"openmpi": "wraps Open MPI: start the program with Open MPI's mpirun", "mpich": "wraps MPICH: start the program with MPICH's mpiexec"}[family]
	if !strings.Contains(err.Error(), want) {
		t.Errorf("launcher message %q lacks %q", err, want)
	}
}

// checkFamilyConstants checks values that differ between the wrapped MPIs
// and the library version string.
func checkFamilyConstants(t *testing.T, l *mpiabi.Lib, family string) {
	t.Helper()
	v, err := l.LibraryVersion()
	if err != nil {
		t.Fatal(err)
	}
	if l.VersionMajor != 2 || l.VersionMinor != 10 || !strings.Contains(l.Build, "hataori") && l.Build == "" {
		t.Errorf("version %d.%d build %q", l.VersionMajor, l.VersionMinor, l.Build)
	}
	type want struct {
		anySource, procNull int
		statusIgnore        uintptr
		version             string
	}
	w, ok := map[string]want{
		"openmpi": {-1, -2, 0, "Open MPI"},
		"mpich":   {-2, -1, 1, "MPICH"},
	}[family]
	if !ok {
		t.Fatalf("unknown family %q", family)
	}
	if l.AnySource != w.anySource || l.ProcNull != w.procNull || l.StatusIgnore != w.statusIgnore || l.AnyTag != -1 || l.Success != 0 {
		t.Errorf("%s: AnySource %d ProcNull %d StatusIgnore %#x AnyTag %d Success %d", family, l.AnySource, l.ProcNull, l.StatusIgnore, l.AnyTag, l.Success)
	}
	if !strings.Contains(v, w.version) {
		t.Errorf("LibraryVersion %q does not mention %s", v, w.version)
	}
	// Hataori's wrapper passes the MPI's own string through: no wrapper
	// line, and the family read from its first line.
	first, _, _ := strings.Cut(v, "\n")
	if p := launch.ParseVersion(v); p.Family.String() != w.version || p.Wrapper != "" || p.MPI != strings.TrimSpace(first) {
		t.Errorf("ParseVersion(%q) = %+v, want family %s from the first line and no wrapper", v, p, w.version)
	}
	if family == "mpich" && (l.CommWorld != 0x44000000 || l.CommSelf != 0x44000001 || l.CommNull != 0x04000000) {
		t.Errorf("MPICH comms %#x %#x %#x", l.CommWorld, l.CommSelf, l.CommNull)
	}
	if !(l.ThreadSingle < l.ThreadFunneled && l.ThreadFunneled < l.ThreadSerialized && l.ThreadSerialized < l.ThreadMultiple) {
		t.Errorf("thread levels %d %d %d %d", l.ThreadSingle, l.ThreadFunneled, l.ThreadSerialized, l.ThreadMultiple)
	}
	handles := []uintptr{uintptr(l.CommWorld), uintptr(l.CommSelf), uintptr(l.CommNull),
		uintptr(l.Byte), uintptr(l.Char), uintptr(l.Int), uintptr(l.Int32), uintptr(l.Int64), uintptr(l.Uint64),
		uintptr(l.Double), uintptr(l.Float), uintptr(l.Min), uintptr(l.Max), uintptr(l.Sum)}
	seen := map[uintptr]bool{}
	for i, h := range handles {
		if h == 0 || seen[h] && i != 5 && i != 6 { // MPI_INT and MPI_INT32_T may coincide
			t.Errorf("handle %d = %#x is zero or repeated", i, h)
		}
		seen[h] = true
	}
}

// childP2P: self messages (Isend, then Probe/Iprobe/Recv, then Wait),
// get-count and status checks. A blocking Send to the own rank hangs under
// MPICH over UCX, so it is tried on Open MPI only.
func childP2P(t *testing.T, l *mpiabi.Lib, family string) {
	initChild(t, l)
	st := new(mpiabi.Status)
	if ok, err := l.Iprobe(l.AnySource, l.AnyTag, l.CommWorld, st); ok || err != nil {
		t.Fatalf("Iprobe with nothing sent = %v, %v", ok, err)
	}
	msg := []int64{-5, math.MinInt64, 9}
	req, err := l.Isend(unsafe.Pointer(&msg[0]), len(msg), l.Int64, 0, 17, l.CommWorld)
	if err != nil || req == l.RequestNull {
		t.Fatalf("Isend = %#x, %v", req, err)
	}
	ok, err := l.Iprobe(l.AnySource, 17, l.CommWorld, st)
	if !ok || err != nil || st.Source != 0 || st.Tag != 17 {
		t.Fatalf("Iprobe after send = %v, %+v, %v", ok, *st, err)
	}
	if n, err := l.GetCount(st, l.Int64); n != 3 || err != nil {
		t.Errorf("GetCount(Iprobe, int64) = %d, %v", n, err)
	}
	*st = mpiabi.Status{}
	if err := l.Probe(0, l.AnyTag, l.CommWorld, st); err != nil || st.Source != 0 || st.Tag != 17 {
		t.Fatalf("Probe = %+v, %v", *st, err)
	}
	if n, err := l.GetCount(st, l.Byte); n != 24 || err != nil {
		t.Errorf("GetCount(Probe, byte) = %d, %v", n, err)
	}
	got := make([]int64, 8)
	*st = mpiabi.Status{}
	if err := l.Recv(unsafe.Pointer(&got[0]), len(got), l.Int64, l.AnySource, l.AnyTag, l.CommWorld, st); err != nil {
		t.Fatal(err)
	}
	if st.Source != 0 || st.Tag != 17 || st.Error != 0 {
		t.Errorf("Recv status %+v", *st)
	}
	if n, err := l.GetCount(st, l.Int64); n != 3 || err != nil {
		t.Errorf("GetCount(Recv) = %d, %v", n, err)
	}
	for i, v := range msg {
		if got[i] != v {
			t.Errorf("received %v, sent %v", got[:3], msg)
			break
		}
	}
	if err := l.Wait(req, nil); err != nil {
		t.Fatal(err)
	}
	// Zero-length message, received with the status ignored.
	req, err = l.Isend(nil, 0, l.Byte, 0, 3, l.CommWorld)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Recv(nil, 0, l.Byte, 0, 3, l.CommWorld, nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Wait(req, st); err != nil {
		t.Fatal(err)
	}
	// PROC_NULL: a send is a no-op, a receive completes at once with source
	// PROC_NULL and tag ANY_TAG.
	if err := l.Send(unsafe.Pointer(&msg[0]), 1, l.Int64, l.ProcNull, 5, l.CommWorld); err != nil {
		t.Errorf("Send(PROC_NULL): %v", err)
	}
	if err := l.Recv(unsafe.Pointer(&got[0]), 1, l.Int64, l.ProcNull, 5, l.CommWorld, st); err != nil || int(st.Source) != l.ProcNull || int(st.Tag) != l.AnyTag {
		t.Errorf("Recv(PROC_NULL) = %+v, %v", *st, err)
	}
	if family == "openmpi" { // eager blocking send to self
		v := []int32{math.MinInt32}
		if err := l.Send(unsafe.Pointer(&v[0]), 1, l.Int32, 0, 4, l.CommWorld); err != nil {
			t.Fatal(err)
		}
		w := []int32{0}
		if err := l.Recv(unsafe.Pointer(&w[0]), 1, l.Int32, 0, 4, l.CommWorld, st); err != nil || w[0] != math.MinInt32 || st.Tag != 4 {
			t.Errorf("blocking self Send/Recv = %d, %+v, %v", w[0], *st, err)
		}
	}
	// A duplicate communicator is a separate message space.
	d, err := l.CommDup(l.CommWorld)
	if err != nil {
		t.Fatal(err)
	}
	one := []int32{-42}
	req, err = l.Isend(unsafe.Pointer(&one[0]), 1, l.Int32, 0, 1, d)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := l.Iprobe(l.AnySource, l.AnyTag, l.CommWorld, nil); ok {
		t.Error("a message sent on the duplicate is visible on COMM_WORLD")
	}
	if ok, err := l.Iprobe(0, 1, d, nil); !ok || err != nil {
		t.Errorf("Iprobe on the duplicate = %v, %v", ok, err)
	}
	in := []int32{0}
	if err := l.Recv(unsafe.Pointer(&in[0]), 1, l.Int32, 0, 1, d, st); err != nil || in[0] != -42 {
		t.Errorf("Recv on duplicate = %d, %v", in[0], err)
	}
	if err := l.Wait(req, nil); err != nil {
		t.Error(err)
	}
	// With MPI_ERRORS_RETURN on the duplicate, MPI errors come back as
	// *Error with MPI's own text instead of aborting the job.
	if err := l.CommSetErrhandler(d, l.ErrorsReturn); err != nil {
		t.Fatalf("CommSetErrhandler(dup, ErrorsReturn): %v", err)
	}
	sixteen := make([]byte, 16)
	req, err = l.Isend(unsafe.Pointer(&sixteen[0]), len(sixteen), l.Byte, 0, 2, d)
	if err != nil {
		t.Fatal(err)
	}
	eight := make([]byte, 8)
	var me *mpiabi.Error
	err = l.Recv(unsafe.Pointer(&eight[0]), len(eight), l.Byte, 0, 2, d, st)
	if !errors.As(err, &me) || me.Func != "MPIABI_Recv" || me.Code == l.Success || me.Text == "" {
		t.Errorf("truncated Recv = %#v, want an *mpiabi.Error with MPI's text", err)
	} else {
		t.Logf("truncated Recv: %v", err)
	}
	if err := l.Wait(req, nil); err != nil {
		t.Errorf("Wait after the truncated receive: %v", err)
	}
	err = l.Send(unsafe.Pointer(&sixteen[0]), 1, l.Byte, 1, 2, d) // rank 1 of a singleton
	if !errors.As(err, &me) || me.Func != "MPIABI_Send" || me.Text == "" {
		t.Errorf("Send to an invalid rank = %#v, want an *mpiabi.Error with MPI's text", err)
	} else {
		t.Logf("Send to an invalid rank: %v", err)
	}
	if err := l.CommFree(&d); err != nil {
		t.Error(err)
	}
}

// childAllocs: the hot paths do not allocate with reused buffers and status.
func childAllocs(t *testing.T, l *mpiabi.Lib, _ string) {
	initChild(t, l)
	checkHotPathAllocs(t, l, 0, true)
}

// checkHotPathAllocs measures allocations per call of the hot paths with a
// reused Status and buffers. self is the caller's rank; real reports whether
// l is a real MPI (the fake's Probe needs no pending message).
func checkHotPathAllocs(t *testing.T, l *mpiabi.Lib, self int, real bool) {
	t.Helper()
	st := new(mpiabi.Status)
	buf := make([]byte, 8)
	in := make([]byte, 8)
	idle := 0 // a tag the fake never reports
	if n := testing.AllocsPerRun(200, func() {
		if ok, err := l.Iprobe(l.AnySource, idle, l.CommWorld, st); ok || err != nil {
			t.Fatalf("Iprobe = %v, %v", ok, err)
		}
	}); n != 0 {
		t.Errorf("Iprobe allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(200, func() {
		req, err := l.Isend(unsafe.Pointer(&buf[0]), len(buf), l.Byte, self, 9, l.CommWorld)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Probe(self, 9, l.CommWorld, st); err != nil {
			t.Fatal(err)
		}
		if c, err := l.GetCount(st, l.Byte); err != nil || real && c != len(buf) {
			t.Fatal(c, err)
		}
		if err := l.Recv(unsafe.Pointer(&in[0]), len(in), l.Byte, self, 9, l.CommWorld, st); err != nil {
			t.Fatal(err)
		}
		if err := l.Wait(req, nil); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Isend+Probe+GetCount+Recv+Wait allocates %v times per round", n)
	}
	if n := testing.AllocsPerRun(200, func() {
		if err := l.Send(unsafe.Pointer(&buf[0]), len(buf), l.Byte, l.ProcNull, 9, l.CommWorld); err != nil {
			t.Fatal(err)
		}
		if err := l.Recv(unsafe.Pointer(&in[0]), len(in), l.Byte, l.ProcNull, 9, l.CommWorld, nil); err != nil {
			t.Fatal(err)
		}
		if r, err := l.CommRank(l.CommWorld); r != self || err != nil {
			t.Fatal(r, err)
		}
	}); n != 0 {
		t.Errorf("Send+Recv(PROC_NULL)+CommRank allocate %v times per round", n)
	}
}
