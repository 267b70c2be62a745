package mpitest

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Contain makes cmd, once started, the leader of a new session and makes
// its cancellation (exec.CommandContext, or Run's timeout) end everything
// it started: SIGTERM to its process group (mpirun then stops its ranks),
// and after a short grace period SIGKILL to every process still in the
// session. A session rather than a process group, because Open MPI puts
// every rank in a process group of its own. Use it for a launcher started
// outside Run, e.g. a script under mpirun.
func Contain(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		sid := cmd.Process.Pid
		_ = syscall.Kill(-sid, syscall.SIGTERM)
		for deadline := time.Now().Add(killGrace); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if len(sessionMembers(sid)) == 0 {
				return nil
			}
		}
		Reap(cmd)
		return nil
	}
}

// Reap kills every process still left in the session of cmd, a command
// started after Contain (for example a rank whose launcher died). Call it
// once cmd has ended.
func Reap(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	for _, pid := range sessionMembers(cmd.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// sessionMembers lists the live processes of session sid, from /proc.
func sessionMembers(sid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// "pid (comm) state ppid pgrp session ...": comm may hold spaces
		// and parentheses, so split after the last ')'.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 4 || f[0] == "Z" {
			continue
		}
		if got, err := strconv.Atoi(f[3]); err == nil && got == sid {
			pids = append(pids, pid)
		}
	}
	return pids
}
