// Package lanes runs work over caller-held engines: one lane per engine.
//
// An engine is any value the caller owns and lends to Hataori for a run: a
// workspace with preallocated buffers, a BLAS or gonum handle, a GPU stream,
// a client with its own worker pool. The caller decides how many lanes there
// are (one per engine) and how much parallelism each engine has inside;
// Hataori decides which item runs on which lane.
//
// A run starts one goroutine per lane. Each lane goroutine is locked to an OS
// thread of its own for the whole run (runtime.LockOSThread, never unlocked,
// so the thread ends with the run): it is neither the caller's thread nor a
// worker of a hataori.Domain, so an engine whose pool refuses calls from its
// own workers can use every one of its workers from a lane. Lane i is always
// lent engine i, on every run. Nothing in this package outlives a run except
// the caller's engines, and warm state kept in an engine (buffers, caches,
// plans) survives from one run to the next. Engines are lent by value of E,
// so E should usually be a pointer type: a lane that mutates a struct value
// mutates its own copy, which is dropped when the run ends.
//
// Entry points:
//
//   - MapInLanes evaluates every item exactly once on the lanes, keeps the
//     input order and reports the lowest failing index.
//   - PmapLanes runs Hataori's collective Pmap protocol with this rank's local
//     execution through its lanes, the calling goroutine acting as the MPI
//     coordinator that overlaps them. Its options, errors (the failing
//     index, CollectAll), progress hook and statistics are hataori.Pmap's;
//     PmapLanesContext also gives the callback the call's context, which is
//     cancelled on every rank once the call is stopping.
//   - Lanes.Run and Lanes.RunWithCoordinator are the low-level runs both are
//     built on, with a Control shared by the lane bodies and the coordinator.
//
// A Lanes value is not reentrant: starting a run while another run (or a
// PmapLanes call) is active on the same Lanes fails with ErrBusy. In
// PmapLanes that is a collective preflight failure: every rank returns the
// same *hataori.PmapError, and errors.Is(err, ErrBusy) holds on every rank.
package lanes
