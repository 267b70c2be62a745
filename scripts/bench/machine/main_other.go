//go:build !linux

// Command machine measures wake-up and page-fault costs; it needs Linux
// (CPU affinity, raw futex and nanosleep system calls, mmap).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "machine: Linux only")
	os.Exit(2)
}
