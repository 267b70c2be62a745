//go:build (mpirt || mpicgo) && linux

package main

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// allowedCPUs is the calling thread's affinity mask (the launcher's
// binding, inherited by every thread of the rank).
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return firstCPUs(runtime.NumCPU())
	}
	var out []int
	for c := range 1024 {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// processCPU is the CPU time (user and system) of every thread of the
// process so far.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadCPU is the CPU time of the calling thread so far (the main
// goroutine is locked to its thread), from CLOCK_THREAD_CPUTIME_ID, which
// is exact (getrusage's per-thread times are split by ticks).
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// threadSched is the kernel's scheduler statistics of every thread of the
// process (/proc/self/task/*/schedstat): time on a CPU, time runnable but
// waiting for one, and the number of times it was scheduled in.
func threadSched() map[int][3]int64 {
	out := map[int][3]int64{}
	dir, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return out
	}
	for _, d := range dir {
		tid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/self/task/" + d.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var v [3]int64
		if n, _ := fmt.Sscan(string(b), &v[0], &v[1], &v[2]); n == 3 {
			out[tid] = v
		}
	}
	return out
}

// threadReport formats, for the main thread (the coordinator, marked)
// and every other thread that ran at least 0.1% of wall (the runtime's threads included) since before, its
// CPU time, run-queue wait and times scheduled in.
func threadReport(before map[int][3]int64, wall time.Duration) string {
	var parts []string
	now := threadSched()
	tids := make([]int, 0, len(now))
	for tid := range now {
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	for _, tid := range tids {
		v, b := now[tid], before[tid]
		exec, delay, n := v[0]-b[0], v[1]-b[1], v[2]-b[2]
		main := tid == os.Getpid()
		if !main && float64(exec) < 0.001*float64(wall) {
			continue
		}
		name := "thread"
		if main {
			name = "main(coordinator)"
		}
		parts = append(parts, fmt.Sprintf("%s cpu %.1f%% wait %.0f%% in %d×", name, 100*float64(exec)/float64(wall), 100*float64(delay)/float64(wall), n))
	}
	return strings.Join(parts, ", ")
}
