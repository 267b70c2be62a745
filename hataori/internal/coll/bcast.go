package coll

import "github.com/hataori/hataori-go/hataori/internal/mpi"

// Bcast broadcasts root's buf into buf on every other rank: one
// MPI_Bcast on the call's duplicate. Every rank must pass a buffer of the
// same length (agreed beforehand, e.g. by an earlier Bcast of the
// lengths), since MPI matches the broadcast by count; the root's buf is
// only read. It costs one collective of len(buf) bytes and allocates
// nothing. Like every method of Coll it runs on the coordinator (the MPI
// main thread).
func (k *Coll) Bcast(root int, buf []byte) error {
	return mpi.Bcast(k.Comm, buf, root)
}
