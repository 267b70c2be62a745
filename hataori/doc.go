// Package hataori weaves independent items of work across the threads of
// one process and, with an MPI build, across MPI ranks, returning one
// ordered result.
//
// # Local execution
//
// Map applies a callback to every item on the calling goroutine. MapIn
// applies it on a Domain: a fixed set of worker goroutines. In Managed
// placement (Linux) each worker is locked to its own OS thread and pinned
// to its declared CPU; otherwise workers are ordinary goroutines, which
// the runtime runs on any thread (a hand-off to one costs well under a
// microsecond, against 10–50 µs to a locked thread). A LocalMode picks how
// items meet workers: Sequential (one worker, in order), Outer (every item
// once across all workers) or Inner (items in order, each lent the whole
// domain through Domain.Parallel). The zero mode, Auto, uses every worker:
// Outer wherever there is a domain (MapIn, Pmap with a domain), Sequential
// for an MPI-only Pmap (nil domain), so a zero Options with NewLocalDomain
// leaves no worker idle.
//
// Every local call takes a context.Context first: when it ends, no further
// item starts and the call returns an error wrapping ctx.Err(). Callback
// errors come back as *MapError (lowest failing index, message bounded to
// 4096 bytes, original error reachable with errors.Is / errors.As); a
// panicking callback is re-raised on the caller as a *PanicError once every
// worker has stopped.
//
// # GOMAXPROCS
//
// A busy worker, locked or not, needs one of the runtime's GOMAXPROCS Ps to
// run Go code, so at most GOMAXPROCS workers of a MapIn compute at once.
// Pmap makes room itself: for the duration of a call whose callbacks run
// off the calling goroutine it raises GOMAXPROCS, when lower, to the
// rank's computing goroutines (W for an Outer or Inner domain of W
// workers, 1 for Sequential and MPI-only, the lane count for lanes) plus
// one for the coordinator, the goroutine that drives the call and answers
// the other ranks, and restores the value afterwards. On a node where the
// launcher started more ranks than there are CPUs it raises it to one
// more, a P left idle (without one the runtime takes the coordinator's P
// during its MPI calls and then polls every 20 µs, costly on shared
// cores), and leaves it raised for the rest of the process: every change
// stops the world, and there a stop waits for threads that wait for a
// core (up to a hundred milliseconds measured). Go's default GOMAXPROCS is
// the number of CPUs the process may use (affinity mask and cgroup quota).
// Under mpirun with several ranks per node, bind each rank to its own
// cores (e.g. --bind-to core --map-by slot:PE=k) and size the domain to
// that share: NewLocalDomain uses min(GOMAXPROCS, allowed CPUs) workers,
// and NewDomain refuses more workers than allowed CPUs unless
// DomainConfig.Oversubscribe is set.
//
// # Errors, progress and statistics across ranks
//
// Pmap's errors are *PmapError, identical on every rank: PmapError.Index
// is the failing input index, and a preflight error unwraps on every rank
// to the sentinel of the check that failed (ErrDomainBusy,
// ErrOptionsDiffer, …). Options.OnError picks FailFast (the default: a
// failing item stops the call, running batches included, between items,
// and the lowest failing index among the items that ran wins) or
// CollectAll (every item runs; the root keeps every success, and
// PmapError.Failures lists every failure on every rank; only a call-level
// failure, such as a context that ended, stops it). PmapContext gives callbacks a context that is cancelled on
// every rank once the call is stopping. Options.OnProgress reports progress
// on the root's coordinator, and Options.Stats receives, on the root,
// where the work and the time went (CallStats). Branch across ranks only
// on Hataori's sentinels and the PmapError fields: a callback's own error
// and a context's cause are known only on the rank that reported them.
//
// # Threads and MPI
//
// The goroutine that initialises MPI is the MPI main thread and makes
// every MPI call, the collective calls' included. When InitThread
// initialises MPI it locks its caller to its OS thread for that; when MPI
// was initialised elsewhere (mpi4py, a C library), the program makes the
// collective calls on the thread that did, normally by locking its main
// goroutine in an init() function of package main
// (runtime.LockOSThread()), which some MPI libraries and tools prefer
// anyway. Domain workers and lanes never call MPI.
package hataori
