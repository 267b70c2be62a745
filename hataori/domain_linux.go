//go:build linux

package hataori

import (
	"fmt"
	"os"
	"runtime"
	"slices"

	"golang.org/x/sys/unix"
)

// pinningSupported: Managed mode pins and verifies on Linux.
const pinningSupported = true

// threadID returns the calling thread's kernel id.
func threadID() int { return unix.Gettid() }

// initialCPUs is the allowed set when the package was initialised, before
// any worker existed.
var initialCPUs = threadCPUs()

// allowedCPUs returns the process's allowed CPU set: the affinity mask the
// calling thread inherited (set by a launcher's binding, taskset or a
// cgroup cpuset). On a worker, whose own mask may be pinned, and if the
// mask cannot be read, it returns the set seen at package initialisation.
// The main thread's mask is not used: a worker may have been started on
// the main thread and pinned there.
func allowedCPUs() []int {
	if !onWorker() {
		if cpus := threadCPUs(); len(cpus) > 0 {
			return cpus
		}
	}
	if len(initialCPUs) > 0 {
		return slices.Clone(initialCPUs)
	}
	return firstCPUs(runtime.NumCPU())
}

func threadCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	return cpuList(&set)
}

// pinThread pins the calling thread to cpu and reads the mask back.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return err
	}
	var got unix.CPUSet
	if err := unix.SchedGetaffinity(0, &got); err != nil {
		return err
	}
	if got.Count() != 1 || !got.IsSet(cpu) {
		return fmt.Errorf("mask reads back as %v", cpuList(&got))
	}
	return nil
}

func cpuList(set *unix.CPUSet) []int {
	var out []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// parentCPUCount returns how many CPUs this process's parent may run on
// (0 when that cannot be read).
func parentCPUCount() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getppid(), &set); err != nil {
		return 0
	}
	return set.Count()
}

// sharedWithParent reports whether this process may run on exactly the
// CPUs its parent may run on (cpus): a launcher that bound its ranks
// (to cores, to sockets) leaves them a narrower set than its own.
func sharedWithParent(cpus []int) bool {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(os.Getppid(), &set); err != nil {
		return false
	}
	return slices.Equal(cpuList(&set), cpus)
}
