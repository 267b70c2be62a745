//go:build mpirt || mpicgo

package hataori

import "runtime"

// MPI programs lock the main goroutine to the main thread in an init of
// package main; the test binary follows the same rule. (mpitest.Init then
// makes the test goroutine that calls it the MPI main thread.)
func init() { runtime.LockOSThread() }
