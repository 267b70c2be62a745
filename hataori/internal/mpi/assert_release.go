//go:build !hataoridebug && (mpirt || mpicgo)

package mpi

// assertMain is a no-op without the hataoridebug build tag.
func assertMain(string) {}
