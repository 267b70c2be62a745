//go:build mpirt && !mpicgo

package mpi

// CountDecoded reports whether the run-time backend reads message counts
// from the native status (after verifying the layout).
func CountDecoded() bool { return countState.trusted }
