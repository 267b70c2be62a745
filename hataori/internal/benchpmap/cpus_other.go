//go:build (mpirt || mpicgo) && !linux

package main

import (
	"runtime"
	"time"
)

// allowedCPUs is every CPU: no affinity query off Linux.
func allowedCPUs() []int { return firstCPUs(runtime.NumCPU()) }

// processCPU is not measured off Linux.
func processCPU() time.Duration { return 0 }

// threadCPU is not measured off Linux.
func threadCPU() time.Duration { return 0 }
