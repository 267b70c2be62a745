//go:build !unix

package mpitest

import "os/exec"

// Contain leaves cmd as is: without process groups, cancellation kills
// the launcher only.
func Contain(*exec.Cmd) {}

// Reap does nothing where processes cannot be grouped.
func Reap(*exec.Cmd) {}
