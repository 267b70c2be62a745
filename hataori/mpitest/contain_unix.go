//go:build unix && !linux

package mpitest

import (
	"os/exec"
	"syscall"
)

// Contain starts cmd in a new process group and makes its cancellation
// kill the whole group (the launcher and the ranks that stayed in it).
func Contain(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Reap kills whatever is left in the process group of cmd, a command
// started after Contain. Call it once cmd has ended.
func Reap(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
