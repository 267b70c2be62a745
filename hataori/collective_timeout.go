package hataori

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

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

// entry is the entry bound of the active collective call (at most one per
// process: enterCollective's guard), written and read on the MPI main
// thread only: the call's name, when it began, and the deadline (zero once
// every rank has entered, or when no bound applies).
var entry struct {
	op         string
	rank, size int // in the caller's communicator; -1 until known
	since      time.Time
	deadline   time.Time
}

// beginEntry starts the entry bound of collective call op.
func beginEntry(op string) {
	entry.op, entry.rank, entry.size = op, -1, -1
	entry.since, entry.deadline = time.Now(), time.Time{}
	if d := currentEntryTimeout(); d > 0 {
		entry.deadline = entry.since.Add(d)
	}
}

// entered ends the entry bound: every rank is in the call.
func entered() { entry.deadline = time.Time{} }

// checkEntry aborts the job with ExitTimeout when the entry bound has
// passed at now.
func checkEntry(now time.Time) {
	if entry.deadline.IsZero() || now.Before(entry.deadline) {
		return
	}
	who := "this rank"
	if entry.rank >= 0 {
		who = fmt.Sprintf("rank %d of %d", entry.rank, entry.size)
	}
	abortJob(ExitTimeout, fmt.Sprintf("%s waited %v for every rank of the communicator to enter %s (bound: %s or SetEntryTimeout, now %v): "+
		"some rank did not enter the same collective call. It may have returned from it at once with a local error "+
		"(ErrNotMainThread: %s; ErrWorkerEntry; ErrReentrant), called a different collective, or still be busy before it",
		who, now.Sub(entry.since).Round(time.Millisecond), entry.op, EntryTimeoutEnv, currentEntryTimeout(), mainThreadFix))
}
