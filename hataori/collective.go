package hataori

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// The collective calls' entry into the collective layer (package
// internal/coll): the exit codes it aborts with, the preflight failure
// codes, the local entry checks and the entry bound's settings.

// Exit codes with which a collective call aborts the whole MPI job
// (MPI_Abort) when it meets a failure it cannot turn into an error returned
// identically on every rank.
const (
	// ExitPanic: a callback panicked inside a collective call, or user
	// code running on the calling goroutine during one (for example a
	// custom msgpack encoder or decoder) panicked or called
	// runtime.Goexit.
	ExitPanic = 70
	// ExitTransport: an MPI call failed inside a collective call, so the
	// ranks can no longer agree on an outcome.
	ExitTransport = 71
	// ExitProtocol: an internal protocol invariant or error key failed.
	ExitProtocol = 72
	// ExitTimeout: some rank did not enter a collective call within the
	// entry bound (see SetEntryTimeout).
	ExitTimeout = 73
)

// The exit codes are the collective layer's (written out above so that go
// doc shows their values); a mismatch does not compile.
// TestEntryTimeoutEnvIsColls checks EntryTimeoutEnv the same way.
var (
	_ = [1]struct{}{}[ExitPanic-coll.ExitPanic]
	_ = [1]struct{}{}[ExitTransport-coll.ExitTransport]
	_ = [1]struct{}{}[ExitProtocol-coll.ExitProtocol]
	_ = [1]struct{}{}[ExitTimeout-coll.ExitTimeout]
)

// Preflight failure codes shared by Pmap and the data collectives.
const (
	failRoot      int32 = iota + 1 // root out of range or not identical everywhere
	failOptions                    // options or operation differ between ranks
	failPayload                    // payload present on the wrong rank(s) or wrong shard count
	failBusy                       // domain/executor admission refused
	failThread                     // not the MPI main thread, or thread level too low
	failEncode                     // a payload failed to encode or exceeds the wire limit
	failContext                    // the caller's context was already done
	failDomain                     // domain or mode invalid
	failReentrant                  // a collective call is already active on this thread
	failType                       // a value type cannot cross ranks (checkWireTypes)
)

// failure is a local preflight failure (coll.Failure); its Code is one
// of the fail* codes.
type failure = coll.Failure

// agreedFailure is the preflight failure every rank returns.
type agreedFailure = coll.AgreedFailure

// openCollective starts a collective call on c: it duplicates c into the
// call's private communicator and reads rank and size. A Comm that cannot be
// used at all (ErrNoMPI, ErrInvalidComm) is returned as an error before any
// MPI call; an MPI failure of the duplication aborts the job with
// ExitTransport, since peers are already inside the collective call.
func openCollective(c Comm) (*coll.Coll, error) {
	h, err := c.handle()
	if err != nil {
		return nil, err
	}
	k, err := coll.Open(h, c.kept())
	if err != nil {
		coll.AbortJob(ExitTransport, fmt.Sprintf("cannot duplicate the communicator for a collective call: %v", mpiErr(err)))
	}
	if k.Size > 1 {
		sharedJob.Store(true)
	}
	return k, nil
}

// collectiveActive is the re-entrancy guard of the collective calls (Pmap,
// lanes.PmapLanes, Broadcast, Scatter, Gather): only one may be active in a process,
// since all of them run on the one MPI main thread.
var collectiveActive atomic.Bool

// errReentrant is the local cause of a re-entrant collective call.
var errReentrant = fmt.Errorf("a collective call (Pmap, Broadcast, Scatter or Gather) is already active in this process")

// enterCollective runs the local entry checks every collective call makes
// before any MPI call that could involve another rank: an MPI backend in
// this build (ErrNoMPI), no other collective
// call active (errReentrant), not on a domain worker (ErrWorkerEntry), and
// on the MPI main thread (ErrNotMainThread). On success the goroutine stays
// locked to its thread, with a fine timer slack (Linux: 1 µs, so that the
// short back-off sleeps of the call's polling loops are not stretched by
// the kernel's default 50 µs), until exit is called, and the entry bound of
// call op runs (beginEntry) until every rank has entered.
func enterCollective(op string) (exit func(), err error) {
	if mpi.Backend() == "none" {
		return nil, ErrNoMPI
	}
	if !collectiveActive.CompareAndSwap(false, true) {
		return nil, errReentrant
	}
	if onWorker() {
		collectiveActive.Store(false)
		return nil, ErrWorkerEntry
	}
	// Keep the goroutine on its thread for the whole call, whatever the
	// caller did: the MPI main thread must not change under us.
	runtime.LockOSThread()
	if err := checkMainThread(); err != nil {
		runtime.UnlockOSThread()
		collectiveActive.Store(false)
		return nil, err
	}
	undoSlack := coll.FineTimerSlack()
	beginEntry(op)
	return func() {
		coll.Entered()
		undoSlack()
		runtime.UnlockOSThread()
		collectiveActive.Store(false)
	}, nil
}

// checkMainThread fails when the calling thread is not the MPI main thread.
// When MPI was initialised through Hataori (InitThread), the answer comes
// from the recorded thread id, with no MPI call at all; when someone else
// initialised MPI (mpi4py, a C library), it asks MPI_Is_thread_main, a local
// query that involves no other rank.
func checkMainThread() error {
	if on, known := mpi.OnInitThread(); known {
		if !on {
			return fmt.Errorf("%w: %s", ErrNotMainThread, mainThreadFix)
		}
		return nil
	}
	// MPI_Is_thread_main before MPI_Init aborts the process (Open MPI), so
	// ask first whether MPI is up.
	if up, err := mpi.Initialized(); err != nil || !up {
		if err == nil {
			err = ErrNotInitialized
		}
		return fmt.Errorf("%w: %w", ErrNotMainThread, err)
	}
	main, err := mpi.IsThreadMain()
	if err != nil {
		return fmt.Errorf("%w: MPI_Is_thread_main: %w", ErrNotMainThread, err)
	}
	if !main {
		return fmt.Errorf("%w: %s", ErrNotMainThread, mainThreadFix)
	}
	return nil
}

// mainThreadFix says how to make the collective calls on the MPI main
// thread.
const mainThreadFix = coll.MainThreadFix

// DefaultEntryTimeout is how long a collective call waits, by default, for
// every rank of its communicator to enter it (see SetEntryTimeout).
const DefaultEntryTimeout = 10 * time.Minute

// EntryTimeoutEnv names the environment variable that sets the entry
// timeout of every collective call in the process when SetEntryTimeout has
// not been called: a Go duration ("90s", "20m"), or "0" or "off" for no
// bound. A value that does not parse is reported once on stderr and the
// default is used.
const EntryTimeoutEnv = "HATAORI_ENTRY_TIMEOUT"

// entryTimeout holds the bound set by SetEntryTimeout (ns; -1: not set, so
// the environment or the default decides).
var entryTimeout atomic.Int64

func init() { entryTimeout.Store(-1) }

// envEntryTimeout reads EntryTimeoutEnv once.
var envEntryTimeout = sync.OnceValue(func() time.Duration {
	v, _ := os.LookupEnv(EntryTimeoutEnv)
	d, err := parseEntryTimeout(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "hataori: ignoring %s: %v: using %v\n", EntryTimeoutEnv, err, d)
	}
	return d
})

// parseEntryTimeout reads a value of EntryTimeoutEnv: empty gives the
// default, "0" or "off" no bound (0). A value that is not a non-negative
// duration gives the default and an error saying so.
func parseEntryTimeout(v string) (time.Duration, error) {
	switch v {
	case "":
		return DefaultEntryTimeout, nil
	case "off":
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return DefaultEntryTimeout, fmt.Errorf("%q is not a duration such as 90s or 20m, nor 0 or off", v)
	}
	return d, nil
}

// SetEntryTimeout sets how long every later collective call of the process
// (Pmap, PmapContext, lanes.PmapLanes, Broadcast, Scatter, Gather) waits
// for every rank of its communicator to enter the same call, and returns
// the previous bound; d <= 0 means no bound. Without a call the bound
// comes from the environment variable HATAORI_ENTRY_TIMEOUT, else it is
// DefaultEntryTimeout.
//
// The bound covers only the call's entry: the private duplicate of the
// communicator and the preflight's reduction, which complete once every
// rank has arrived. When it passes, the waiting rank prints a diagnosis
// on stderr (some rank did not enter the same collective call: it
// returned early from it with a local error such as ErrNotMainThread,
// called another collective, or is still busy before it) and aborts the
// whole job with exit code ExitTimeout, so that a job whose ranks took
// different paths ends instead of hanging until the batch system kills
// it. Ranks may legitimately arrive far apart (one rank reads the input
// while the others wait in Broadcast): choose a bound longer than that.
// Once every rank is in, the call itself is never timed; items may run as
// long as they need.
//
// Each rank applies its own bound; the first to run out ends the job. It
// may be called from any goroutine.
func SetEntryTimeout(d time.Duration) (previous time.Duration) {
	if d < 0 {
		d = 0
	}
	old := entryTimeout.Swap(int64(d))
	if old < 0 {
		return envEntryTimeout()
	}
	return time.Duration(old)
}

// currentEntryTimeout is the bound in force (0: none).
func currentEntryTimeout() time.Duration {
	if d := entryTimeout.Load(); d >= 0 {
		return time.Duration(d)
	}
	return envEntryTimeout()
}

// beginEntry starts the entry bound of collective call op: the bound in
// force now (currentEntryTimeout).
func beginEntry(op string) { coll.BeginEntry(op, currentEntryTimeout()) }

// When a collective call may keep its private communicator for the next
// call on the same parent (coll.Kept has the isolation argument). Both
// decisions read only the call's converged error, which every rank returns
// identically, so every rank keeps or frees alike.

// pmapReusable reports whether a Pmap call that passed its preflight and
// converged to err left no frame in flight: its drain ran to the end
// (success, item failures, a cancellation). A wire or protocol fault may
// have stopped reading a frame half-way: the duplicate is freed.
func pmapReusable(err error) bool {
	var pe *PmapError
	if err == nil {
		return true
	}
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Kind == KindUser || pe.Kind == KindCanceled
}

// dataReusable reports the same for a data collective (or any call) that
// returned err: success, or a preflight failure (no frame was sent).
func dataReusable(err error) bool {
	var pe *PmapError
	var ce *CollectiveError
	switch {
	case err == nil:
		return true
	case errors.As(err, &ce):
		return ce.Kind == KindPreflight
	case errors.As(err, &pe):
		return pe.Kind == KindPreflight
	}
	return false
}
