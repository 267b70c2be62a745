// Package sched is the pure scheduler state machine behind hataori.Pmap.
//
// It holds no MPI, no goroutines and no item values: the coordinator (the
// goroutine that called Pmap) translates every MPI message or local
// completion into one transition, and acts on the decision it returns.
// Tests drive the transitions directly.
//
// The root owns a FIFO of indexed items. Batches are contiguous runs of at
// most BatchSize indices in input order, identified by batch ids that start
// at zero and increase by one with checked overflow; the original input
// index is the stable task key. Every rank, the root included, has one lane
// with capacity one (at most one running batch, nothing prefetched).
//
// Remote lanes, as seen by the root, follow exactly
//
//	Idle -> ReadySent -> Running -> ResultSent -> Idle
//	Idle -> ReadySent -> StopReceived -> Drained
//
// The root's own lane follows the same logical states without messages:
// RootDispatch plays the part of READY, CompleteRoot the part of RESULT.
// After the first recoverable error (a failed batch, Fail, FailRunning) no
// batch is assigned any more and every later READY gets STOP. Completions
// are validated fully before anything changes: a bad RESULT returns a
// typed protocol error and leaves every table untouched.
//
// Worker is the matching machine a non-root rank keeps for its own lane.
package sched
