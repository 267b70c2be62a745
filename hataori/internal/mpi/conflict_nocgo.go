//go:build mpicgo && !mpirt && !cgo

package mpi

// The cgo backend (tag mpicgo) links the system MPI through cgo, which
// CGO_ENABLED=0 turns off: build it with CGO_ENABLED=1 and CC=mpicc (Open
// MPI) or CC=mpicc.mpich (MPICH), or use the run-time backend (tag mpirt),
// which needs no cgo at all.
var _ = Hataori_build_tag_mpicgo_needs_cgo_set_CGO_ENABLED_1_and_CC_mpicc_or_use_tag_mpirt
