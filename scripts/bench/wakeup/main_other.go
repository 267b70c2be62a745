//go:build !linux

// Command wakeup measures wake-up costs on a shared CPU; it needs Linux
// (CPU affinity, raw futex and nanosleep system calls).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "wakeup: Linux only")
	os.Exit(2)
}
