// Package coll is Hataori's collective layer: the per-call state of a
// collective call (Coll: a private duplicate of the caller's
// communicator), its control collectives (the preflight agreement, the
// error convergence, broadcasts) with their polite waits and the entry
// bound, the frames of the point-to-point protocol, and the waits of the
// engine's polling loops (Backoff, Kick, ThreadSleep). It sits between
// the Pmap engine and the data collectives of package hataori above and
// the MPI transport (hataori/internal/mpi) below, and imports nothing
// from hataori.
//
// Every method of Coll makes MPI calls and must run on the MPI main
// thread. A failure the ranks cannot turn into one agreed error aborts
// the job (AbortJob) with one of the Exit codes, which package hataori
// re-exports.
package coll
