//go:build mpirt || mpicgo

package mpi

import "time"

// abortGrace is how long Abort waits before MPI_Abort: MPI_Abort makes the
// launcher kill every rank, and MPICH's Hydra can drop output a rank wrote
// just before, so an explanation printed right before aborting would never
// reach the user. The pause lets the launcher forward it.
const abortGrace = 300 * time.Millisecond
