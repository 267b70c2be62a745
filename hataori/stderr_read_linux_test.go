//go:build mpirt || mpicgo

package hataori

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// WaitStderrRead waits until whoever reads this process's standard error
// has read everything written to it so far, for bound at most, and reports
// whether it has. A rank's standard error is a pipe to its MPI launcher
// (Open MPI and MPICH alike), whose unread bytes FIONREAD counts; for
// anything but a pipe it reports false at once. A rank that is about to
// die (abort, SIGKILL) calls it after the line a test looks for, so that
// the launcher holds the line before it learns of the death, rather than
// sleeping and hoping that it does. (Exported for the external test
// package.)
func WaitStderrRead(bound time.Duration) bool {
	fd := os.Stderr.Fd()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fd), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return false
	}
	for deadline := time.Now().Add(bound); ; time.Sleep(time.Millisecond) {
		var n int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
			return false
		}
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
