// Package hataori weaves independent items of work across the threads of
// one process and, with an MPI build, across MPI ranks, returning one
// ordered result.
//
// # Local execution
//
// Map applies a callback to every item on the calling goroutine. MapIn
// applies it on a Domain: a fixed set of worker goroutines, each locked to
// its OS thread, optionally pinned to declared CPUs (Managed placement on
// Linux). A LocalMode picks how items meet workers: Sequential (one worker,
// in order), Outer (every item once across all workers) or Inner (items in
// order, each lent the whole domain through Domain.Parallel).
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
// Domain workers are goroutines locked to OS threads. A locked thread still
// needs one of the runtime's GOMAXPROCS Ps to run Go code, so a domain of W
// busy workers uses W Ps. The goroutine that drives an MPI call (Pmap) is
// the coordinator and needs a P too while a batch runs on the workers:
// set GOMAXPROCS to at least W+1 on a rank that coordinates, and never
// below W. Go's default GOMAXPROCS is the number of CPUs the process may
// use (affinity mask and cgroup quota). Under mpirun with several ranks
// per node, bind each rank to its own cores (e.g. --bind-to core
// --map-by slot:PE=k) or set GOMAXPROCS to the rank's CPU share; then size
// the domain to that share. NewLocalDomain uses min(GOMAXPROCS, allowed
// CPUs) workers.
//
// # Errors, progress and statistics across ranks
//
// Pmap's errors are *PmapError, identical on every rank: PmapError.Index
// is the failing input index, and a preflight error unwraps on every rank
// to the sentinel of the check that failed (ErrDomainBusy,
// ErrOptionsDiffer, …). Options.OnError picks FailFast (the default: the
// lowest failing index stops the call) or CollectAll (every item runs; the
// root keeps every success, and PmapError.Failures lists every failure on
// every rank). PmapContext gives callbacks a context that is cancelled on
// every rank once the call is stopping. Options.OnProgress reports progress
// on the root's coordinator, and Options.Stats receives, on the root,
// where the work and the time went (CallStats). Branch across ranks only
// on Hataori's sentinels and the PmapError fields: a callback's own error
// and a context's cause are known only on the rank that reported them.
//
// # Threads and MPI
//
// A program that uses MPI must call runtime.LockOSThread() in an init()
// function of package main, so that the main goroutine stays on the thread
// that initialised MPI. Domain workers never call MPI.
package hataori
