// Package sched is the pure scheduler state machine behind hataori.Pmap.
//
// It holds no MPI, no goroutines and no item values: the coordinator (the
// goroutine that called Pmap) translates every MPI message or local
// completion into one transition, and acts on the decision it returns.
// Tests drive the transitions directly.
//
// The root owns a FIFO of indexed items. Batches are contiguous runs of
// indices in input order, identified by batch ids that start at zero and
// increase by one over the whole call with checked overflow; the original
// input index is the stable task key. A batch's Start and Count say which
// indices it holds: only with a fixed Config.BatchSize B is Start = ID·B.
//
// # Batch sizes
//
// A positive BatchSize fixes every batch at B items (the last one shorter).
// BatchSize 0 makes sizes automatic: the scheduler has no clock, so the
// engine reports each completed batch's Timing (OnResultTimed,
// CompleteRootTimed) and the scheduler keeps, per rank,
//
//   - the item cost c: compute/count per batch, the larger of a moving
//     average (weight 1/4) and the last batch's, so a rising cost is
//     followed at once and a falling one within a few batches;
//   - the per-batch overhead o: the median of the last OverheadWindow (8)
//     samples of round trip − compute − queued (remote slots), never less
//     than MinOverhead (1 µs; the root's own slots report no round trip
//     and get exactly that);
//   - the bytes per item: the largest of the measured batches' (the larger
//     of a remote batch's TASK and RESULT, divided by its items).
//
// The next batch of a rank with r indices unassigned then has
//
//	n = ceil(OverheadShare·o/c)                 overhead ≤ 1/32 of compute
//	n ≤ Growth·(largest batch measured on rank)  at most ×2 per measurement
//	n ≤ MaxBatchBytes / (bytes per item)        64 MiB per TASK or RESULT
//	n ≤ MaxSize                                  (65536)
//	n ≤ ceil(r / (Factoring·W))                  the factoring cap
//	n ≥ 1
//
// and StartSize (1) before the rank's first measurement, since an item of
// unknown cost may be long. W = Σ over every slot of max(1, c_rank/c_slot's
// rank), unknown costs counting 1: with equal costs W is the call's slot
// count, so no batch takes more than 1/(2·slots) of what remains and the
// last items still spread over every slot (factoring, Hummel et al.
// 1992), and a rank k times slower than the others gets about a k-th of
// that, so its last batch takes no longer than theirs (weighted
// factoring). A slower rank's own measurements also shrink its overhead
// rule's n in proportion. Prefetch(rank) reports when a remote rank's
// measured overhead exceeds 1/PrefetchShare (1/16) of a batch's compute at
// its current size, which is when overlapping the round trip pays.
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
