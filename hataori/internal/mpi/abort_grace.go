package mpi

import "time"

// AbortGrace is how long a process that is about to call Abort waits after
// printing why: MPI_Abort makes the launcher kill every rank, and MPICH's
// Hydra can drop output a rank wrote just before, so the explanation would
// never reach the user. The pause lets the launcher forward it.
const AbortGrace = 300 * time.Millisecond
