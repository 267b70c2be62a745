//go:build linux

package hataori

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func threadMask(t *testing.T, tid int) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		t.Fatalf("sched_getaffinity(%d): %v", tid, err)
	}
	return cpuList(&set)
}

// Managed workers are each pinned to their own declared CPU, as the kernel
// reports it for each worker thread.
func TestManagedAffinity(t *testing.T) {
	allowed := allowedCPUs()
	if len(allowed) < 2 {
		t.Skipf("only %d CPU allowed (%v): distinct pinning needs two", len(allowed), allowed)
	}
	// Declare the CPUs in reverse so worker i's CPU differs from i.
	cpus := slices.Clone(allowed)
	slices.Reverse(cpus)
	d, err := NewDomain(DomainConfig{Workers: len(cpus), CPUs: cpus, Pinning: Managed})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Placement() != Verified {
		t.Fatalf("placement = %v, want Verified", d.Placement())
	}
	seen := map[int]bool{}
	for i, tid := range d.workerTIDs() {
		mask := threadMask(t, tid)
		if !slices.Equal(mask, []int{cpus[i]}) {
			t.Errorf("worker %d (thread %d) mask %v, want [%d]", i, tid, mask, cpus[i])
		}
		seen[tid] = true
	}
	if len(seen) != len(cpus) {
		t.Errorf("%d distinct worker threads, want %d", len(seen), len(cpus))
	}
	// Seen from inside the callbacks: every item runs on a pinned CPU of d.
	out, err := MapIn(context.Background(), d, Outer, make([]int, 64), func(int) ([]int, error) {
		var set unix.CPUSet
		err := unix.SchedGetaffinity(0, &set)
		return cpuList(&set), err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, mask := range out {
		if len(mask) != 1 || !slices.Contains(cpus, mask[0]) {
			t.Fatalf("item %d ran with mask %v", i, mask)
		}
	}
}

// Declared workers are not pinned, and a closed managed domain's pinned
// threads are gone (the main thread, if a worker ran there, is parked by
// the runtime for good), so their masks never reach another goroutine.
func TestDeclaredAffinityAndNoLeak(t *testing.T) {
	allowed := allowedCPUs()
	if len(allowed) < 2 {
		t.Skipf("only %d CPU allowed (%v): a pin is indistinguishable from no pin", len(allowed), allowed)
	}
	m, err := NewDomain(DomainConfig{Workers: len(allowed), CPUs: allowed, Pinning: Managed})
	if err != nil {
		t.Fatal(err)
	}
	pinned := m.workerTIDs()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// The runtime ends a locked thread just after its goroutine exits.
	deadline := time.Now().Add(10 * time.Second)
	for _, tid := range pinned {
		for tid != unix.Getpid() {
			var set unix.CPUSet
			err := unix.SchedGetaffinity(tid, &set)
			if err == unix.ESRCH {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pinned worker thread %d still exists after Close (mask %v, err %v)", tid, cpuList(&set), err)
			}
			time.Sleep(time.Millisecond)
		}
	}
	d, err := NewDomain(DomainConfig{Workers: len(allowed), CPUs: allowed})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Placement() != CallerDeclared {
		t.Fatalf("placement = %v, want CallerDeclared", d.Placement())
	}
	for i, tid := range d.workerTIDs() {
		if mask := threadMask(t, tid); !slices.Equal(mask, allowed) {
			t.Errorf("declared worker %d mask %v, want the allowed set %v", i, mask, allowed)
		}
	}
	if got := allowedCPUs(); !slices.Equal(got, allowed) {
		t.Errorf("allowed set changed to %v after pinning, want %v", got, allowed)
	}
}

// A rank that a launcher started unbound beside another takes its share of
// the CPUs, its workers pinned there; bound (a narrower set than its
// parent's), it takes them all as before.
func TestNewLocalDomainRankShare(t *testing.T) {
	cpus := allowedCPUs()
	if !sharedWithParent(cpus) {
		t.Skip("this test process may not run on its parent's CPUs")
	}
	clearLauncherLocal(t)
	t.Setenv("MPI_LOCALRANKID", "1")
	t.Setenv("MPI_LOCALNRANKS", "2")
	d, err := NewLocalDomain()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	share := rankShare(cpus, 1, 2)
	want := share[:max(1, min(runtime.GOMAXPROCS(0), len(share)))]
	if !slices.Equal(d.CPUs(), want) || d.Workers() != len(want) || d.Placement() != Verified {
		t.Fatalf("local rank 1 of 2 on %v: %d workers on %v, %v; want %d on %v, Verified", cpus, d.Workers(), d.CPUs(), d.Placement(), len(want), want)
	}
	// A launcher that bound the rank left it fewer CPUs than its parent.
	if len(cpus) >= 2 && sharedWithParent(cpus[:1]) {
		t.Errorf("sharedWithParent(%v) with the parent on %v", cpus[:1], cpus)
	}
}
