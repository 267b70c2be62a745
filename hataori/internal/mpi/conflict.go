//go:build mpirt && mpicgo

package mpi

// The build tags mpirt (run-time MPIABI backend) and mpicgo (cgo backend)
// select two implementations of this package; set at most one of them.
var _ = Hataori_build_tags_mpirt_and_mpicgo_are_mutually_exclusive_set_only_one
