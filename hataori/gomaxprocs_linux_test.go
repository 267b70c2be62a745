package hataori

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// gomaxprocsChildEnv marks the child process of TestGOMAXPROCSRestored.
const gomaxprocsChildEnv = "HATAORI_TEST_GOMAXPROCS_CHILD"

// TestGOMAXPROCSRestored checks that a call that raised GOMAXPROCS puts
// back the value it found and leaves the runtime's automatic updates in
// force: in a child process without the GOMAXPROCS variable, with the
// process's threads allowed one CPU (the runtime follows to 1), the raise
// for an MPI-only slot gives 2 and the restore 1; then the threads are
// allowed every CPU again, and GOMAXPROCS must follow by itself, which it
// does not once runtime.GOMAXPROCS(n) has switched the updates off. A
// call for which GOMAXPROCS is already high enough leaves it alone and the
// updates on. Where spareWanted says so (a node with more ranks than CPUs;
// forced here, last, since it switches the updates off), a call raises it
// at once to one more (the idle P) and leaves it there: later calls find
// it high enough, and one that needs more raises it again, never lower.
func TestGOMAXPROCSRestored(t *testing.T) {
	if os.Getenv(gomaxprocsChildEnv) != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGOMAXPROCSRestored$", "-test.v", "-test.count=1")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMAXPROCS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, gomaxprocsChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), "--- SKIP") {
			t.Skipf("child skipped:\n%s", out)
		}
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	// The testing package sets GOMAXPROCS explicitly (for -test.cpu),
	// which switches the automatic updates off: switch them back on, as a
	// program that never set GOMAXPROCS has them.
	runtime.SetDefaultGOMAXPROCS()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Fatal(err)
	}
	if all.Count() < 2 {
		t.Skip("needs 2 allowed CPUs")
	}
	var one unix.CPUSet
	for c := 0; ; c++ {
		if all.IsSet(c) {
			one.Set(c)
			break
		}
	}
	setProcessAffinity(t, &one)
	defer setProcessAffinity(t, &all)
	if !waitGOMAXPROCS(1) {
		t.Skipf("the runtime does not follow the CPU affinity here (GOMAXPROCS %d with one CPU allowed)", runtime.GOMAXPROCS(0))
	}
	defer func(w func() bool) { spareWanted = w }(spareWanted)
	spareWanted = func() bool { return false } // a node with a CPU per rank
	// One slot and the coordinator: 2 during the call, restored to 1.
	restore := keepCoordinatorResponsive(helperExec{})
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("during the call GOMAXPROCS = %d, want 2 (one slot and the coordinator)", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("after the call GOMAXPROCS = %d, want the 1 it was before", got)
	}
	setProcessAffinity(t, &all)
	if !waitGOMAXPROCS(all.Count()) {
		t.Fatalf("GOMAXPROCS stayed %d after every CPU was allowed again: the call switched the runtime's automatic updates off", runtime.GOMAXPROCS(0))
	}
	// Every CPU allowed (at least 2, all an MPI-only call needs): the call
	// leaves GOMAXPROCS alone, during and after, and the updates on.
	restore = keepCoordinatorResponsive(helperExec{})
	if got := runtime.GOMAXPROCS(0); got != all.Count() {
		t.Fatalf("during a call that needs 2, GOMAXPROCS = %d, want the %d it was", got, all.Count())
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != all.Count() {
		t.Fatalf("after a call that needed no raise, GOMAXPROCS = %d, want %d", got, all.Count())
	}
	setProcessAffinity(t, &one)
	if !waitGOMAXPROCS(1) {
		t.Fatalf("GOMAXPROCS stayed %d with one CPU allowed after a call that needed no raise: the automatic updates are off", runtime.GOMAXPROCS(0))
	}
	// More ranks than CPUs: one slot, the coordinator and the idle P, 3
	// at once and after the call; a later call changes nothing, one with
	// more computing goroutines raises it further, and none lowers it.
	spareWanted = func() bool { return true }
	restore = keepCoordinatorResponsive(helperExec{})
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("during a call on an oversubscribed node GOMAXPROCS = %d, want 3 (one slot, the coordinator, an idle P)", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Fatalf("after a call on an oversubscribed node GOMAXPROCS = %d, want the 3 it raised it to", got)
	}
	restore = keepCoordinatorResponsive(threadsExec(3))
	if got := runtime.GOMAXPROCS(0); got != 5 {
		t.Fatalf("during a call of 3 computing goroutines GOMAXPROCS = %d, want 5", got)
	}
	restore()
	restore = keepCoordinatorResponsive(helperExec{})
	restore()
	if got := runtime.GOMAXPROCS(0); got != 5 {
		t.Fatalf("after a later call that needs 3, GOMAXPROCS = %d, want the 5 it was", got)
	}
}

// threadsExec is an executor of n computing goroutines, for
// keepCoordinatorResponsive (only Threads and Offloads are used).
type threadsExec int

func (n threadsExec) Slots() int                  { return int(n) }
func (n threadsExec) Threads() int                { return int(n) }
func (n threadsExec) Offloads() bool              { return true }
func (n threadsExec) Run(func(int), func()) error { return nil }

// setProcessAffinity allows every thread of the process the CPUs of set
// (threads started later inherit it from their creator).
func setProcessAffinity(t *testing.T, set *unix.CPUSet) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			t.Fatalf("sched_setaffinity(%d): %v", tid, err)
		}
	}
}

// waitGOMAXPROCS reports whether GOMAXPROCS becomes n within 5 s. The
// runtime's system monitor checks at most once a second, and only while it
// is awake: a sleeping process can put it to sleep for long, so the wait
// keeps the process busy.
func waitGOMAXPROCS(n int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if runtime.GOMAXPROCS(0) == n {
			return true
		}
		for spin := time.Now(); time.Since(spin) < time.Millisecond; {
		}
		time.Sleep(time.Millisecond)
	}
	return false
}
