package coll

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

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

// Coll is the per-call state shared by Pmap and the data
// collectives: a private duplicate of the caller's communicator (so the caller's
// own messages are never consumed), with this rank's rank and the size.
//
// Every method makes MPI calls and must run on the MPI main thread. An error
// returned by a method other than a *wire.Error from RecvFrame is an MPI
// (transport) failure: the ranks can no longer converge and the caller must
// abort the job with AbortTransport.
type Coll struct {
	Comm       mpi.Handle
	Rank, Size int
}

// Open duplicates h (politeDup: waiting politely for the
// other ranks where the backend can), sets MPI_ERRORS_RETURN on the duplicate
// (so that an MPI failure during the call comes back as an error carrying
// MPI's message, and the call aborts the job with ExitTransport and that
// message rather than dying inside MPI) and reads rank and size. On
// failure nothing is left allocated.
func Open(h mpi.Handle) (*Coll, error) {
	if r, err := mpi.Rank(h); err == nil {
		if n, err := mpi.Size(h); err == nil {
			entry.rank, entry.size = r, n
		}
	}
	d, err := politeDup(h)
	if err != nil {
		return nil, err
	}
	k := &Coll{Comm: d}
	if err = mpi.SetErrorsReturn(d); err != nil {
		_ = mpi.Free(&d)
		return nil, err
	}
	if k.Rank, err = mpi.Rank(d); err == nil {
		k.Size, err = mpi.Size(d)
	}
	if err != nil {
		_ = mpi.Free(&d)
		return nil, err
	}
	return k, nil
}

// Close frees the private duplicate.
func (k *Coll) Close() error {
	return mpi.Free(&k.Comm)
}

// CloseOrAbort frees the private communicator; failing to is a transport
// failure.
func (k *Coll) CloseOrAbort() {
	if err := k.Close(); err != nil {
		AbortJob(ExitTransport, fmt.Sprintf("freeing the private communicator: %v", err))
	}
}

// AbortTransport reports err on stderr and aborts the job with
// ExitTransport. It does not return.
func (k *Coll) AbortTransport(err error) {
	AbortJob(ExitTransport, fmt.Sprintf("unrecoverable MPI failure in a collective call: %v", err))
}

// AbortProtocol reports an internal protocol failure and aborts the job with
// ExitProtocol. It does not return.
func (k *Coll) AbortProtocol(msg string) {
	AbortJob(ExitProtocol, "internal protocol failure in a collective call: "+msg)
}

// AbortPanicked is the guard of a collective call that is leaving
// abnormally: r is the value recovered by the deferred function that calls
// it (nil for runtime.Goexit, which recover cannot stop). It prints the
// panic value and the stack, still the panicking one, to stderr and aborts
// the job with ExitPanic, so no other rank is left waiting in the call. It
// does not return.
func (k *Coll) AbortPanicked(call string, r any) {
	if r == nil {
		fmt.Fprintf(os.Stderr, "hataori: runtime.Goexit on the calling goroutine of %s (for example t.FailNow in a callback)\n\n%s\n", call, debug.Stack())
	} else {
		fmt.Fprintf(os.Stderr, "hataori: panic on the calling goroutine of %s: %v\n\n%s\n", call, r, debug.Stack())
	}
	AbortJob(ExitPanic, fmt.Sprintf("panic in user code running on the coordinator of %s", call))
}

// AbortJob writes msg to stderr and calls MPI_Abort on MPI_COMM_WORLD with
// code. Always the world, never the call's own (duplicated or borrowed)
// communicator: MPICH 4 aborts any other communicator by sending each peer
// a message and waiting for it, and a peer dies only when it next makes
// MPI progress, so across hosts the job could outlive the abort by
// seconds or hang; on MPI_COMM_WORLD both MPIs have the launcher kill
// every rank.
func AbortJob(code int, msg string) {
	fmt.Fprintf(os.Stderr, "hataori: %s; aborting the MPI job with exit code %d\n", msg, code)
	mpi.Abort(mpi.World(), code)
	os.Exit(code) // not reached: MPI_Abort does not return
}
