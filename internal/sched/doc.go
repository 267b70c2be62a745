// Package sched is the pure scheduler state machine behind hataori.Pmap.
//
// It holds no MPI, no goroutines and no item values: the coordinator (the
// goroutine that called Pmap) translates every MPI message or local
// completion into one transition, and acts on the decision it returns.
// Tests drive the transitions directly.
//
// The root owns a FIFO of indexed items. Batches are contiguous runs of at
// most BatchSize indices in input order, identified by batch ids that start
// at zero and increase by one over the whole call with checked overflow;
// the original input index is the stable task key.
//
// Every rank, the root included, offers Config.Slots[rank] >= 1 slots.
// Each slot has capacity one: at most one running batch and
// nothing prefetched. Every (rank, slot) pair follows the transitions
// independently of the other slots:
//
//	Idle -> ReadySent -> Running -> Idle
//	Idle -> ReadySent -> StopReceived
//
// and a rank goes -> Drained exactly once, with a single DRAIN, after all
// of its slots are StopReceived; every slot of the rank is Drained then.
// A remote slot's READY names the slot and gets exactly one answer, a TASK
// (Assign) or a STOP. The root's own slots follow the same logical states
// without messages: RootDispatch plays the part of READY, CompleteRoot the
// part of RESULT, and OnDrain(Root) the root's own drain.
//
// After the first recoverable error (a failed batch, Fail, FailRunning) no
// batch is assigned any more and every later READY or root dispatch gets
// STOP. A transition that the protocol does not allow returns a typed
// protocol error and changes nothing; completions are validated fully
// before anything changes, so a bad RESULT leaves every table untouched.
//
// Remote is the matching machine a non-root rank keeps for its own slots.
package sched
