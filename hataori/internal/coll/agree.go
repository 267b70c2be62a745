package coll

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/internal/seam"
)

// Failure is a local preflight failure, agreed collectively by Agree.
type Failure struct {
	// Code is a small ordinal (hataori's fail* constants, at most 255)
	// naming the check.
	Code int32
	// Message explains the failure; it is bounded before transmission.
	Message string
	// Err is the local cause (a sentinel such as ErrDomainBusy, or an
	// error wrapping one), or nil. Its registered sentinel (seam.CauseOf)
	// travels with the code, so that every rank rebuilds it.
	Err error
}

// AgreedFailure is the preflight failure every rank returns: the lowest
// failing rank's code, bounded message and cause.
type AgreedFailure struct {
	Rank    int
	Code    int32
	Message string
	// Cause is what errors.Is reaches on every rank: on the failing rank
	// its own local error, elsewhere the sentinel registered for the cause
	// number it sent (see preflightCause), or nil when it had none.
	Cause error
}

// Agree converges local preflight outcomes: each rank contributes its rank
// if it failed and the size if it passed to a signed MIN, then agreeOn
// takes over. Every rank returns the same *AgreedFailure, or nil when all
// passed.
func (k *Coll) Agree(local *Failure) (*AgreedFailure, error) {
	w, err := k.AllreduceMin([]int64{int64(k.failVote(local))})
	if err != nil {
		return nil, err
	}
	return k.agreeOn(w[0], local)
}

// AgreeAndCompare is a preflight's one reduction: a signed MIN over the
// vector (v, ^v, vote, flag). The first two report whether every rank passed the
// same v (MIN(^v) = ^MAX(v), without overflow, so they agree exactly when
// the minimum equals the maximum); the third is Agree's vote for local;
// the fourth is 0 on a rank that raises flag, 1 elsewhere, so raised
// reports whether some rank raised it (Pmap's root announces that it runs
// the whole call itself). When same is true, agreed is agreeOn's outcome
// of the votes (nil when every rank passed); when it is false the votes
// and the flag are not used (they were cast under the assumption that v
// agreed) and agreed is nil.
func (k *Coll) AgreeAndCompare(v int64, flag bool, local *Failure) (same bool, agreed *AgreedFailure, raised bool, err error) {
	f := int64(1)
	if flag {
		f = 0
	}
	out, err := k.AllreduceMin([]int64{v, ^v, int64(k.failVote(local)), f})
	if err != nil {
		return false, nil, false, err
	}
	Entered() // every rank took part: the entry bound is over
	if out[0] != ^out[1] {
		return false, nil, false, nil
	}
	agreed, err = k.agreeOn(out[2], local)
	return true, agreed, out[3] == 0, err
}

// PreflightAgree is the preflight agreement of every collective call
// (Pmap's word is its packed options, a data collective's its operation
// and root): one reduction (AgreeAndCompare) of word, flag and the vote for
// local, this rank's first failing check computed as if every rank had
// passed the same word. When the words differ, rank 0 broadcasts its word,
// every rank reruns its checks against it (recheck) and a second agreement
// decides; some rank must then fail. The calls are the same in every
// branch for every kind of collective call, so that ranks that entered
// different ones also fail together. It returns the agreed failure (nil
// when every rank passed) and, when every rank passed, whether some rank
// raised flag; MPI failures abort the job.
func (k *Coll) PreflightAgree(word int64, flag bool, local *Failure, recheck func(ref int64) *Failure) (*AgreedFailure, bool) {
	same, af, raised, err := k.AgreeAndCompare(word, flag, local)
	if err != nil {
		k.AbortTransport(err)
	}
	if same {
		return af, raised && af == nil
	}
	ref, err := k.BcastInt64(0, word)
	if err != nil {
		k.AbortTransport(err)
	}
	if af, err = k.Agree(recheck(ref)); err != nil {
		k.AbortTransport(err)
	}
	if af == nil {
		k.AbortProtocol("preflight words differ between ranks, but every rank passed its checks against rank 0's")
	}
	return af, false
}

// failVote is a rank's contribution to Agree's MIN: its rank when local
// failed, the size when it passed.
func (k *Coll) failVote(local *Failure) int32 {
	if local != nil {
		return int32(k.Rank)
	}
	return int32(k.Size)
}

// agreeOn finishes Agree given w, the MIN of every rank's vote: when w is
// a rank, that lowest failing rank broadcasts its code, the number of its
// cause's sentinel (seam.CauseOf(local.Err), in the code's second byte)
// and its bounded message. Every rank returns the same *AgreedFailure (its
// Cause the failing rank's own error there, the rebuilt sentinel
// elsewhere), or nil when w is the size (every rank passed).
func (k *Coll) agreeOn(w int64, local *Failure) (*AgreedFailure, error) {
	if int(w) == k.Size {
		return nil, nil
	}
	if w < 0 || int(w) > k.Size {
		k.AbortProtocol(fmt.Sprintf("preflight reduction returned %d for world size %d", w, k.Size))
	}
	if int(w) == k.Rank && local == nil {
		k.AbortProtocol(fmt.Sprintf("preflight reduction names rank %d, which passed", w))
	}
	var code int32
	var msg string
	if int(w) == k.Rank {
		// The cause number rides in the second byte of the code.
		code, msg = local.Code&0xff|int32(seam.CauseOf(local.Err))<<8, local.Message
	}
	code, msg, err := k.BcastCoded(int(w), code, msg)
	if err != nil {
		return nil, err
	}
	a := &AgreedFailure{Rank: int(w), Code: code & 0xff, Message: msg}
	if int(w) == k.Rank && local.Err != nil {
		a.Cause = local.Err
	} else {
		a.Cause = seam.Sentinel(seam.Cause(code >> 8 & 0xff))
	}
	return a, nil
}

// NoError is the convergence key of a rank that has nothing to report.
const NoError = math.MaxInt64

// ConvergeCoded is the final error convergence of a collective call: a
// signed MIN over key (NoError when this rank has no error; otherwise a
// non-negative key whose value modulo size is the reporting rank), then the
// winning rank broadcasts a small code (for example an error kind) and its
// bounded message. Every rank returns the same (winKey, code, winMsg);
// winKey is NoError when no rank reported.
func (k *Coll) ConvergeCoded(key int64, code int32, msg string) (int64, int32, string, error) {
	if key < 0 {
		return 0, 0, "", fmt.Errorf("negative error key %d", key)
	}
	m, err := k.AllreduceMin([]int64{key})
	if err != nil {
		return 0, 0, "", err
	}
	w := m[0]
	if w == NoError {
		return NoError, 0, "", nil
	}
	if w < 0 {
		return 0, 0, "", fmt.Errorf("error convergence returned negative key %d", w)
	}
	winner := int(w % int64(k.Size))
	if winner == k.Rank && w != key {
		return 0, 0, "", fmt.Errorf("error key %d names this rank, which reported %d", w, key)
	}
	code, out, err := k.BcastCoded(winner, code, msg)
	if err != nil {
		return 0, 0, "", err
	}
	return w, code, out, nil
}

// BcastCoded broadcasts (code, errmsg.Bound(msg)) from root: an 8-byte
// prefix (code int32, length uint32, little-endian), then the bytes.
func (k *Coll) BcastCoded(root int, code int32, msg string) (int32, string, error) {
	var pre [8]byte
	if k.Rank == root {
		msg = errmsg.Bound(msg)
		binary.LittleEndian.PutUint32(pre[0:], uint32(code))
		binary.LittleEndian.PutUint32(pre[4:], uint32(len(msg)))
	}
	if err := mpi.Bcast(k.Comm, pre[:], root); err != nil {
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
	if k.Rank == root {
		copy(buf, msg)
	}
	if err := mpi.Bcast(k.Comm, buf, root); err != nil {
		return 0, "", err
	}
	if k.Rank == root {
		return code, msg, nil
	}
	return code, string(buf), nil
}

// BcastInt64 returns root's v on every rank.
func (k *Coll) BcastInt64(root int, v int64) (int64, error) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	if err := mpi.Bcast(k.Comm, b[:], root); err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b[:])), nil
}

// BcastBytes returns root's buf on every rank: its length, then its bytes
// in chunks of at most bcastChunk.
func (k *Coll) BcastBytes(root int, buf []byte) ([]byte, error) {
	n, err := k.BcastInt64(root, int64(len(buf)))
	if err != nil {
		return nil, err
	}
	if n < 0 || n > 1<<40 {
		return nil, fmt.Errorf("broadcast of %d bytes", n)
	}
	if k.Rank != root {
		buf = make([]byte, n)
	}
	for off := int64(0); off < n; off += bcastChunk {
		if err := mpi.Bcast(k.Comm, buf[off:min(n, off+bcastChunk)], root); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// bcastChunk bounds one MPI_Bcast of BcastBytes (MPI counts are ints).
const bcastChunk = 1 << 30
