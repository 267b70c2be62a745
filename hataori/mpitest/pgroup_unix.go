//go:build unix

package mpitest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a new process group and makes cancellation kill
// the whole group (the launcher and every rank it started).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
