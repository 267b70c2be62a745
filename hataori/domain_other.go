//go:build !linux

package hataori

import (
	"runtime"
	"strconv"
	"strings"
)

// pinningSupported: off Linux, Managed mode pins nothing and reports
// CallerDeclared.
const pinningSupported = false

// threadID identifies the calling worker off Linux, where no portable
// thread id exists: it is the goroutine id, which names the same worker
// because each worker goroutine stays on its locked thread.
func threadID() int {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	id, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return id
}

// allowedCPUs returns 0..NumCPU-1: the allowed set is not observable here.
func allowedCPUs() []int {
	out := make([]int, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out
}

func pinThread(int) error { return nil }
