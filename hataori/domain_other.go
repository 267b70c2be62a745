//go:build !linux

package hataori

import "runtime"

// pinningSupported: off Linux, Managed mode pins nothing and reports
// CallerDeclared.
const pinningSupported = false

// threadID is never called off Linux: only a pinned worker records its
// thread (runWorker), and nothing is pinned here. It lets worker.go build.
func threadID() int { return 0 }

// allowedCPUs returns 0..NumCPU-1: the allowed set is not observable here.
func allowedCPUs() []int { return firstCPUs(runtime.NumCPU()) }

func pinThread(int) error { return nil }

// sharedWithParent is false off Linux: the parent's CPUs are not observable
// here, so NewLocalDomain takes every allowed CPU.
func sharedWithParent([]int) bool { return false }

// parentCPUCount is 0 off Linux: the parent's CPUs are not observable here.
func parentCPUCount() int { return 0 }
