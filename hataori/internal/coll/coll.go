package coll

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"

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
// own messages are never consumed), with this rank's rank and the size. The
// duplicate is either made for the call or taken from the parent's Kept
// (see Open and Close).
//
// Every method makes MPI calls and must run on the MPI main thread. An error
// returned by a method other than a *wire.Error from RecvFrame is an MPI
// (transport) failure: the ranks can no longer converge and the caller must
// abort the job with AbortTransport.
type Coll struct {
	Comm       mpi.Handle
	Rank, Size int
	// Reusable, set by the caller before Close, says that the call ended
	// with no frame of its own in flight on Comm, by a decision every rank
	// makes alike (see Kept): Close then keeps Comm in the parent's Kept
	// instead of freeing it. False (the default) frees it.
	Reusable bool
	keep     *Kept // the parent's slot (nil: a duplicate per call)
}

// Kept is the private duplicate that one parent communicator keeps between
// its collective calls, so that a call needs no MPI_Comm_dup (a collective
// with a polite barrier under Open MPI, 15–20 µs on 2 ranks) when an
// earlier one left a clean duplicate behind. The zero Kept holds none.
//
// Isolation. A kept duplicate carries only Hataori's frames, and only
// one call at a time uses it (the collective calls are not reentrant:
// Open takes it out of the slot, Close puts it back). A call marks its
// Coll Reusable only when every frame any rank sent on it during the call
// has been received: Pmap after its drain (every remote rank's DRAIN is its
// last frame and the root returns only once it received every DRAIN; the
// root sends a rank nothing after that rank's last STOP, a CANCEL only
// before it; all on one tag, so MPI's non-overtaking order makes the DRAIN
// or the last STOP the last frame between each pair), the data
// collectives after their move (each receiver receives every frame
// announced to it, head and body, before parsing), and any call that
// failed its preflight (no point-to-point frame yet). Collective
// operations on it (the reductions and broadcasts) are matched in the
// order every rank calls them and all of a call's complete before it
// returns, so none is left over either.
//
// Agreement. Every rank must keep or free alike: a rank that kept while
// another freed would start its next call's preflight on a communicator
// the others no longer use. So the caller derives Reusable only from the
// call's converged outcome (the error every rank returns identically:
// nil, a preflight failure, or a Pmap item failure or cancellation keep
// it; a wire or protocol fault drops it, since such a call may have
// stopped reading a frame half-way), never from local state; and every
// rank's Kept holds the same thing before each call, since the ranks make
// the same calls on the parent in the same order with the same converged
// outcomes. Transport faults abort the job.
//
// Lifetime. The owner of the parent frees the kept duplicate before the
// parent (hataori's Comm.Free) and FreeKept frees all of them (hataori's
// Finalize, before MPI_Finalize). Kept must not move once used (it is
// registered by address).
type Kept struct {
	h          mpi.Handle
	ok         bool // h holds a duplicate
	rank, size int
	gone       bool // the parent is freed: keep nothing more
}

// kept registers every Kept that holds a duplicate, for FreeKept.
var kept struct {
	sync.Mutex
	all map[*Kept]struct{}
}

// Open opens a call's private communicator on h: the duplicate keep
// holds, if any (no MPI call but the entry bookkeeping), else a new one.
// A new duplicate of h is made waiting politely for the other ranks where
// the backend can (politeDup), with MPI_ERRORS_RETURN set on it (so that
// an MPI failure during the call comes back as an error carrying MPI's
// message, and the call aborts the job with ExitTransport and that message
// rather than dying inside MPI), and its rank and size read. keep is the
// parent's slot, or nil for a parent whose duplicates must not outlive the
// call (a borrowed handle). On failure nothing is left allocated.
func Open(h mpi.Handle, keep *Kept) (*Coll, error) {
	if keep != nil && keep.ok {
		k := &Coll{Comm: keep.h, Rank: keep.rank, Size: keep.size, keep: keep}
		entry.rank, entry.size = keep.rank, keep.size
		keep.h, keep.ok = 0, false
		unregister(keep)
		noteOpen(true, k.Comm)
		return k, nil
	}
	if r, err := mpi.Rank(h); err == nil {
		if n, err := mpi.Size(h); err == nil {
			entry.rank, entry.size = r, n
		}
	}
	d, err := politeDup(h)
	if err != nil {
		return nil, err
	}
	k := &Coll{Comm: d, keep: keep}
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
	noteOpen(false, k.Comm)
	return k, nil
}

// Prime puts a new private duplicate of h into keep, as the first
// collective call on the parent would make and keep (Open, then Close of a
// reusable call), so that this call needs no MPI_Comm_dup. It is
// collective over h's ranks, on the MPI main thread; every rank primes
// alike (keep is then the same everywhere). It does nothing when keep
// already holds a duplicate or its parent is gone.
func Prime(h mpi.Handle, keep *Kept) error {
	if keep.ok || keep.gone {
		return nil
	}
	k, err := Open(h, keep)
	if err != nil {
		return err
	}
	k.Reusable = true
	return k.Close()
}

// Close ends the call's use of its private communicator: when the call
// marked it Reusable and the parent keeps duplicates (and was not freed
// meanwhile), it goes back into the parent's Kept, with no MPI call;
// otherwise it is freed (MPI_Comm_free).
func (k *Coll) Close() error {
	if p := k.keep; p != nil && k.Reusable && !p.gone && !p.ok {
		p.h, p.ok, p.rank, p.size = k.Comm, true, k.Rank, k.Size
		k.Comm = 0
		kept.Lock()
		if kept.all == nil {
			kept.all = make(map[*Kept]struct{})
		}
		kept.all[p] = struct{}{}
		kept.Unlock()
		return nil
	}
	noteFree()
	return mpi.Free(&k.Comm)
}

// CloseOrAbort closes the private communicator (Close); failing to free
// it is a transport failure.
func (k *Coll) CloseOrAbort() {
	if err := k.Close(); err != nil {
		AbortJob(ExitTransport, fmt.Sprintf("freeing the private communicator: %v", err))
	}
}

// Free frees the duplicate p holds, if any (MPI_Comm_free, collective
// over the parent's ranks: every rank's p holds the same, see Kept), on
// the MPI main thread. With retire, p keeps nothing afterwards (its parent
// is being freed). p is empty afterwards even when MPI_Comm_free fails.
func (p *Kept) Free(retire bool) error {
	if retire {
		p.gone = true
	}
	if !p.ok {
		return nil
	}
	h := p.h
	p.h, p.ok = 0, false
	unregister(p)
	noteFree()
	return mpi.Free(&h)
}

// FreeKept frees every kept duplicate (Kept.Free) of every parent, on the
// MPI main thread, before MPI_Finalize; it returns every failure joined.
func FreeKept() error {
	kept.Lock()
	all := make([]*Kept, 0, len(kept.all))
	for p := range kept.all {
		all = append(all, p)
	}
	kept.Unlock()
	var errs []error
	for _, p := range all {
		errs = append(errs, p.Free(false))
	}
	return errors.Join(errs...)
}

// AnyKept reports whether some parent keeps a duplicate now.
func AnyKept() bool {
	kept.Lock()
	defer kept.Unlock()
	return len(kept.all) > 0
}

func unregister(p *Kept) {
	kept.Lock()
	delete(kept.all, p)
	kept.Unlock()
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
