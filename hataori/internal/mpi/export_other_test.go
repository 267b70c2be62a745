//go:build !mpirt

package mpi

// CountDecoded is true on backends that need no count decoding.
func CountDecoded() bool { return true }
