//go:build (mpirt || mpicgo) && linux

package main

import (
	"runtime"

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
