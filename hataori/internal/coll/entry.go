package coll

import (
	"fmt"
	"time"
)

// EntryTimeoutEnv names the environment variable that sets the entry
// bound of every collective call (hataori.EntryTimeoutEnv).
const EntryTimeoutEnv = "HATAORI_ENTRY_TIMEOUT"

// MainThreadFix says how to make the collective calls on the MPI main
// thread.
const MainThreadFix = "make the collective calls from the goroutine that initialised MPI, normally main's " +
	"(hataori.InitThread locks its caller to its thread; when MPI is initialised elsewhere, " +
	"call runtime.LockOSThread() in an init function of package main and make the calls from main)"

// entry is the entry bound of the active collective call (at most one per
// process: hataori's enterCollective guard), written and read on the MPI
// main thread only: the call's name, its bound, when it began, and the
// deadline (zero once every rank has entered, or when no bound applies).
var entry struct {
	op         string
	rank, size int // in the caller's communicator; -1 until known
	bound      time.Duration
	since      time.Time
	deadline   time.Time
}

// BeginEntry starts the entry bound (d; 0: none) of collective call op.
// It must run on the MPI main thread, with no other collective call
// active.
func BeginEntry(op string, d time.Duration) {
	entry.op, entry.rank, entry.size, entry.bound = op, -1, -1, d
	entry.since, entry.deadline = time.Now(), time.Time{}
	if d > 0 {
		entry.deadline = entry.since.Add(d)
	}
}

// Entered ends the entry bound: every rank is in the call.
func Entered() { entry.deadline = time.Time{} }

// EntryState reports the entry bound in force: the call's name, this
// rank's rank (-1 until known) and the deadline (zero: none). For tests.
func EntryState() (op string, rank int, deadline time.Time) {
	return entry.op, entry.rank, entry.deadline
}

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
	AbortJob(ExitTimeout, fmt.Sprintf("%s waited %v for every rank of the communicator to enter %s (bound: %s or SetEntryTimeout, now %v): "+
		"some rank did not enter the same collective call. It may have returned from it at once with a local error "+
		"(ErrNotMainThread: %s; ErrWorkerEntry; a collective call already active), called a different collective, or still be busy before it",
		who, now.Sub(entry.since).Round(time.Millisecond), entry.op, EntryTimeoutEnv, entry.bound, MainThreadFix))
}
