//go:build (mpirt || mpicgo) && !linux

package main

import "runtime"

// allowedCPUs is every CPU: no affinity query off Linux.
func allowedCPUs() []int { return firstCPUs(runtime.NumCPU()) }
