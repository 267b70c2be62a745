//go:build (mpirt || mpicgo) && linux

package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// killGrace is how long a cancelled command gets to end after SIGTERM
// before every process left in its session is killed.
const killGrace = 3 * time.Second

// ownSession starts cmd as the leader of a new session and makes
// cancellation end the whole session: SIGTERM to the leader's process
// group (Open MPI's mpirun then stops its ranks), and after killGrace
// SIGKILL to every process still in the session. A session, not a process
// group, because Open MPI puts every rank in a process group of its own.
func ownSession(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error {
		sid := cmd.Process.Pid
		_ = syscall.Kill(-sid, syscall.SIGTERM)
		for deadline := time.Now().Add(killGrace); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if len(sessionMembers(sid)) == 0 {
				return nil
			}
		}
		killSession(sid)
		return nil
	}
}

// killSession sends SIGKILL to every process in session sid (the
// processes a command started with ownSession left behind).
func killSession(sid int) {
	for _, pid := range sessionMembers(sid) {
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
