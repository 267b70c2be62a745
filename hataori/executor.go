package hataori

// Executor is the local-execution seam of the collective calls: on each
// rank, Pmap hands batches of items to one Executor and keeps the calling
// goroutine as the coordinator that makes every MPI call. A *Domain (with a
// LocalMode), the MPI-only calling goroutine, and the lanes of package lanes
// are the executors Hataori ships; most programs never implement one.
//
// An Executor runs at most one batch at a time (capacity one per rank).
type Executor interface {
	// Enter claims the executor for one collective call without blocking.
	// It fails (for example with ErrDomainBusy) when the executor is
	// already claimed or closed. On success, release is called exactly
	// once, after the last batch has finished, when the call ends.
	Enter() (release func(), err error)

	// Offloads reports whether Start runs batches off the calling
	// goroutine. An offloading executor lets the coordinator service MPI
	// while a batch runs, and needs MPI_THREAD_FUNNELED or stronger.
	Offloads() bool

	// Start runs one batch. It calls b.Run(slot, i) for items i in
	// [0, b.N) (slot names the worker or lane running it, in
	// [0, Slots())), then calls b.Done exactly once after every started
	// item has returned. An executor with sequential semantics stops
	// starting items after a Run returns false; one that evaluates every
	// item (Outer, lanes) ignores the result. Run never panics: the caller
	// recovers inside it. A non-offloading executor runs the whole batch,
	// Done included, before Start returns.
	Start(b Batch)

	// Slots is the number of distinct slot values Run may be called with.
	Slots() int
}

// Batch is one unit of work handed to an Executor.
type Batch struct {
	// N is the number of items in the batch.
	N int
	// Run evaluates item i on slot; false asks a sequential executor to
	// start no further item of this batch.
	Run func(slot, i int) bool
	// Done is called once, from any goroutine, when the batch has ended.
	Done func()
}
