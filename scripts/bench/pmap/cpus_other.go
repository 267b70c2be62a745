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

// threadCPU falls back to the wall clock off Linux.
func threadCPU() time.Duration { return time.Since(epoch) }

var epoch = time.Now()

// threadSched is not measured off Linux.
func threadSched() map[int][3]int64 { return nil }

func threadReport(map[int][3]int64, time.Duration) string { return "" }
