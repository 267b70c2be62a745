//go:build hataoridebug && (mpirt || mpicgo)

package mpi

import "fmt"

// assertMain panics when MPI is active and the caller is not the MPI main
// thread (build tag hataoridebug only). fn names the MPI call about to run.
func assertMain(fn string) {
	if ok, err := Initialized(); err != nil || !ok {
		return
	}
	if done, err := Finalized(); err != nil || done {
		return
	}
	main, err := IsThreadMain()
	if err == nil && !main {
		panic(fmt.Sprintf("hataori/internal/mpi: %s called off the MPI main thread "+
			"(MPI calls belong to the goroutine that initialised MPI, locked with runtime.LockOSThread)", fn))
	}
}
