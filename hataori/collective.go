package hataori

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/internal/slot"
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

// collective is the per-call state shared by Pmap and the data
// collectives: a private duplicate of the caller's communicator (so the caller's
// own messages are never consumed), with this rank's rank and the size.
//
// Every method makes MPI calls and must run on the MPI main thread. An error
// returned by a method other than a *wire.Error from recvFrame is an MPI
// (transport) failure: the ranks can no longer converge and the caller must
// abort the job with abortTransport.
type collective struct {
	comm       mpi.Handle
	rank, size int
}

// openCollectiveOn duplicates h (politeDup: waiting politely for the
// other ranks where the backend can), sets MPI_ERRORS_RETURN on the duplicate
// (so that an MPI failure during the call comes back as an error carrying
// MPI's message, and the call aborts the job with ExitTransport and that
// message rather than dying inside MPI) and reads rank and size. On
// failure nothing is left allocated.
func openCollectiveOn(h mpi.Handle) (*collective, error) {
	if r, err := mpi.Rank(h); err == nil {
		if n, err := mpi.Size(h); err == nil {
			entry.rank, entry.size = r, n
		}
	}
	d, err := politeDup(h)
	if err != nil {
		return nil, err
	}
	k := &collective{comm: d}
	if err = mpi.SetErrorsReturn(d); err != nil {
		_ = mpi.Free(&d)
		return nil, err
	}
	if k.rank, err = mpi.Rank(d); err == nil {
		k.size, err = mpi.Size(d)
	}
	if err != nil {
		_ = mpi.Free(&d)
		return nil, err
	}
	return k, nil
}

// close frees the private duplicate.
func (k *collective) close() error {
	return mpi.Free(&k.comm)
}

// abortTransport reports err on stderr and aborts the job with
// ExitTransport. It does not return.
func (k *collective) abortTransport(err error) {
	abortJob(ExitTransport, fmt.Sprintf("unrecoverable MPI failure in a collective call: %v", err))
}

// abortProtocol reports an internal protocol failure and aborts the job with
// ExitProtocol. It does not return.
func (k *collective) abortProtocol(msg string) {
	abortJob(ExitProtocol, "internal protocol failure in a collective call: "+msg)
}

// abortPanicked is the guard of a collective call that is leaving
// abnormally: r is the value recovered by the deferred function that calls
// it (nil for runtime.Goexit, which recover cannot stop). It prints the
// panic value and the stack, still the panicking one, to stderr and aborts
// the job with ExitPanic, so no other rank is left waiting in the call. It
// does not return.
func (k *collective) abortPanicked(call string, r any) {
	if r == nil {
		fmt.Fprintf(os.Stderr, "hataori: runtime.Goexit on the calling goroutine of %s (for example t.FailNow in a callback)\n\n%s\n", call, debug.Stack())
	} else {
		fmt.Fprintf(os.Stderr, "hataori: panic on the calling goroutine of %s: %v\n\n%s\n", call, r, debug.Stack())
	}
	abortJob(ExitPanic, fmt.Sprintf("panic in user code running on the coordinator of %s", call))
}

// abortJob writes msg to stderr and calls MPI_Abort on MPI_COMM_WORLD with
// code. Always the world, never the call's own (duplicated or borrowed)
// communicator: MPICH 4 aborts any other communicator by sending each peer
// a message and waiting for it, and a peer dies only when it next makes
// MPI progress, so across hosts the job could outlive the abort by
// seconds or hang; on MPI_COMM_WORLD both MPIs have the launcher kill
// every rank.
func abortJob(code int, msg string) {
	fmt.Fprintf(os.Stderr, "hataori: %s; aborting the MPI job with exit code %d\n", msg, code)
	mpi.Abort(mpi.World(), code)
	os.Exit(code) // not reached: MPI_Abort does not return
}

// failure is a local preflight failure, agreed collectively by agree.
type failure struct {
	// Code is a small ordinal (the fail* constants) naming the check.
	Code int32
	// Message explains the failure; it is bounded before transmission.
	Message string
	// Err is the local cause (a sentinel such as ErrDomainBusy, or an
	// error wrapping one), or nil. Its registered sentinel (slot.CauseOf)
	// travels with the code, so that every rank rebuilds it.
	Err error
}

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
	failType                       // a value type cannot cross ranks (wirecheck.go)
)

// agreedFailure is the preflight failure every rank returns: the lowest
// failing rank's code, bounded message and cause.
type agreedFailure struct {
	Rank    int
	Code    int32
	Message string
	// Cause is what errors.Is reaches on every rank: on the failing rank
	// its own local error, elsewhere the sentinel registered for the cause
	// number it sent (see preflightCause), or nil when it had none.
	Cause error
}

// agree converges local preflight outcomes: each rank contributes its rank
// if it failed and the size if it passed to a signed MIN, then agreeOn
// takes over. Every rank returns the same *agreedFailure, or nil when all
// passed.
func (k *collective) agree(local *failure) (*agreedFailure, error) {
	w, err := k.allreduceMin([]int64{int64(k.failVote(local))})
	if err != nil {
		return nil, err
	}
	return k.agreeOn(w[0], local)
}

// agreeAndCompare is a preflight's one reduction: a signed MIN over the
// vector (v, ^v, vote). The first two report whether every rank passed the
// same v (MIN(^v) = ^MAX(v), without overflow, so they agree exactly when
// the minimum equals the maximum); the third is agree's vote for local.
// When same is true, agreed is agreeOn's outcome of the votes (nil when
// every rank passed); when it is false the votes are not used (they were
// cast under the assumption that v agreed) and agreed is nil.
func (k *collective) agreeAndCompare(v int64, local *failure) (same bool, agreed *agreedFailure, err error) {
	out, err := k.allreduceMin([]int64{v, ^v, int64(k.failVote(local))})
	if err != nil {
		return false, nil, err
	}
	entered() // every rank took part: the entry bound is over
	if out[0] != ^out[1] {
		return false, nil, nil
	}
	agreed, err = k.agreeOn(out[2], local)
	return true, agreed, err
}

// preflightAgree is the preflight agreement of every collective call
// (Pmap's word is its packed options, a data collective's its operation
// and root): one reduction (agreeAndCompare) of word and the vote for
// local, this rank's first failing check computed as if every rank had
// passed the same word. When the words differ, rank 0 broadcasts its word,
// every rank reruns its checks against it (recheck) and a second agreement
// decides; some rank must then fail. The calls are the same in every
// branch for every kind of collective call, so that ranks that entered
// different ones also fail together. It returns the agreed failure (nil
// when every rank passed); MPI failures abort the job.
func (k *collective) preflightAgree(word int64, local *failure, recheck func(ref int64) *failure) *agreedFailure {
	same, af, err := k.agreeAndCompare(word, local)
	if err != nil {
		k.abortTransport(err)
	}
	if same {
		return af
	}
	ref, err := k.bcastInt64(0, word)
	if err != nil {
		k.abortTransport(err)
	}
	if af, err = k.agree(recheck(ref)); err != nil {
		k.abortTransport(err)
	}
	if af == nil {
		k.abortProtocol("preflight words differ between ranks, but every rank passed its checks against rank 0's")
	}
	return af
}

// failVote is a rank's contribution to agree's MIN: its rank when local
// failed, the size when it passed.
func (k *collective) failVote(local *failure) int32 {
	if local != nil {
		return int32(k.rank)
	}
	return int32(k.size)
}

// agreeOn finishes agree given w, the MIN of every rank's vote: when w is
// a rank, that lowest failing rank broadcasts its code, the number of its
// cause's sentinel (slot.CauseOf(local.Err), in the code's second byte)
// and its bounded message. Every rank returns the same *agreedFailure (its
// Cause the failing rank's own error there, the rebuilt sentinel
// elsewhere), or nil when w is the size (every rank passed).
func (k *collective) agreeOn(w int64, local *failure) (*agreedFailure, error) {
	if int(w) == k.size {
		return nil, nil
	}
	if w < 0 || int(w) > k.size {
		k.abortProtocol(fmt.Sprintf("preflight reduction returned %d for world size %d", w, k.size))
	}
	if int(w) == k.rank && local == nil {
		k.abortProtocol(fmt.Sprintf("preflight reduction names rank %d, which passed", w))
	}
	var code int32
	var msg string
	if int(w) == k.rank {
		// The cause number rides in the second byte of the code.
		code, msg = local.Code&0xff|int32(slot.CauseOf(local.Err))<<8, local.Message
	}
	code, msg, err := k.bcastCoded(int(w), code, msg)
	if err != nil {
		return nil, err
	}
	a := &agreedFailure{Rank: int(w), Code: code & 0xff, Message: msg}
	if int(w) == k.rank && local.Err != nil {
		a.Cause = local.Err
	} else {
		a.Cause = slot.Sentinel(slot.Cause(code >> 8 & 0xff))
	}
	return a, nil
}

// noError is the convergence key of a rank that has nothing to report.
const noError = math.MaxInt64

// convergeCoded is the final error convergence of a collective call: a
// signed MIN over key (noError when this rank has no error; otherwise a
// non-negative key whose value modulo size is the reporting rank), then the
// winning rank broadcasts a small code (for example an error kind) and its
// bounded message. Every rank returns the same (winKey, code, winMsg);
// winKey is noError when no rank reported.
func (k *collective) convergeCoded(key int64, code int32, msg string) (int64, int32, string, error) {
	if key < 0 {
		return 0, 0, "", fmt.Errorf("negative error key %d", key)
	}
	m, err := k.allreduceMin([]int64{key})
	if err != nil {
		return 0, 0, "", err
	}
	w := m[0]
	if w == noError {
		return noError, 0, "", nil
	}
	if w < 0 {
		return 0, 0, "", fmt.Errorf("error convergence returned negative key %d", w)
	}
	winner := int(w % int64(k.size))
	if winner == k.rank && w != key {
		return 0, 0, "", fmt.Errorf("error key %d names this rank, which reported %d", w, key)
	}
	code, out, err := k.bcastCoded(winner, code, msg)
	if err != nil {
		return 0, 0, "", err
	}
	return w, code, out, nil
}

// bcastCoded broadcasts (code, errmsg.Bound(msg)) from root: an 8-byte
// prefix (code int32, length uint32, little-endian), then the bytes.
func (k *collective) bcastCoded(root int, code int32, msg string) (int32, string, error) {
	var pre [8]byte
	if k.rank == root {
		msg = errmsg.Bound(msg)
		binary.LittleEndian.PutUint32(pre[0:], uint32(code))
		binary.LittleEndian.PutUint32(pre[4:], uint32(len(msg)))
	}
	if err := mpi.Bcast(k.comm, pre[:], root); err != nil {
		return 0, "", err
	}
	code = int32(binary.LittleEndian.Uint32(pre[0:]))
	n := binary.LittleEndian.Uint32(pre[4:])
	if n > errmsg.Max {
		return 0, "", fmt.Errorf("broadcast message length %d exceeds %d", n, errmsg.Max)
	}
	if n == 0 {
		return code, "", nil
	}
	buf := make([]byte, n)
	if k.rank == root {
		copy(buf, msg)
	}
	if err := mpi.Bcast(k.comm, buf, root); err != nil {
		return 0, "", err
	}
	if k.rank == root {
		return code, msg, nil
	}
	return code, string(buf), nil
}

// bcastInt64 returns root's v on every rank.
func (k *collective) bcastInt64(root int, v int64) (int64, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	if err := mpi.Bcast(k.comm, b[:], root); err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b[:])), nil
}
