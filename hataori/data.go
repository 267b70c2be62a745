package hataori

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// dataOp names a data collective; ranks agree on it in preflight.
type dataOp int32

const (
	opBroadcast dataOp = iota + 1
	opScatter
	opGather
)

func (op dataOp) String() string {
	switch op {
	case opBroadcast:
		return "Broadcast"
	case opScatter:
		return "Scatter"
	case opGather:
		return "Gather"
	}
	return fmt.Sprintf("dataOp(%d)", int32(op))
}

// dataWord marks the preflight word of a data collective (bit 62, which
// Pmap's 59-bit packed options never set), so that ranks calling Pmap and
// ranks calling a data collective never look alike.
const dataWord = int64(1) << 62

// tagData is the tag of data-collective frames on the call's private
// communicator.
const tagData = 1

// dataFault is a rank's first fault while moving data (the frame exchange
// of Broadcast, Scatter or Gather), converged like a Pmap fault.
type dataFault struct {
	kind ErrorKind
	msg  string
}

// dataCall is the shared skeleton of Broadcast, Scatter and Gather.
//
// On every rank it runs the local entry checks (enterCollective: no other
// collective call active, not on a domain worker, on the MPI main thread),
// which fail on this rank alone with a KindPreflight error of Rank -1
// before any MPI call involving other ranks; then it opens a private duplicate of comm, agrees on the
// operation and root, takes typeErr (the value type's checkWireType result,
// refused on every size of world, one included) or else runs the local
// checks of prepare (which also encodes
// every payload this rank must send) and agrees on their outcome; if all
// passed it runs move (the frame exchange, which must receive every
// announced frame even after a failure), then converges the lowest reporting
// rank's failure, frees the duplicate and returns the converged error (nil
// when no rank failed). Every rank returns an equal error.
//
// A panic in user code running on the coordinator, e.g. a custom msgpack
// encoder or decoder of the value (or a runtime.Goexit there), aborts the
// job with ExitPanic once the private duplicate is open, so no rank is left
// waiting in the call.
func dataCall(ctx context.Context, comm Comm, op dataOp, root int, typeErr error,
	prepare func(k *coll.Coll) *failure,
	move func(k *coll.Coll) *dataFault) error {
	exit, err := enterCollective(op.String())
	if err != nil {
		return &CollectiveError{Kind: KindPreflight, Rank: -1, Op: op.String(), Message: err.Error(), err: err}
	}
	defer exit()
	if ctx == nil {
		ctx = context.Background()
	}
	k, err := openCollective(comm)
	if err != nil {
		return &CollectiveError{Kind: KindPreflight, Rank: -1, Op: op.String(), Message: err.Error(), err: err}
	}
	normal := false
	defer func() {
		if !normal {
			k.AbortPanicked(op.String(), recover())
		}
	}()
	perr := dataRun(ctx, k, op, root, typeErr, prepare, move)
	k.Reusable = dataReusable(perr) // the converged outcome: alike on every rank
	if err := k.Close(); err != nil {
		k.AbortTransport(err)
	}
	normal = true
	return perr
}

func dataRun(ctx context.Context, k *coll.Coll, op dataOp, root int, typeErr error,
	prepare func(k *coll.Coll) *failure,
	move func(k *coll.Coll) *dataFault) error {
	inRange := root >= 0 && root < k.Size
	r := int64(-1)
	if inRange {
		r = int64(root)
	}
	var local *failure
	switch {
	case !inRange:
		local = &failure{Code: failRoot, Err: ErrInvalidOptions, Message: fmt.Sprintf("root %d out of range [0, %d)", root, k.Size)}
	case typeErr != nil:
		local = wireTypeFailure(typeErr)
	case ctx.Err() != nil:
		local = &failure{Code: failContext, Err: fmt.Errorf("hataori: collective call %w: %w", KindCanceled, context.Cause(ctx)), Message: fmt.Sprintf("rank %d: context done before the call: %v", k.Rank, ctx.Err())}
	default:
		local = prepare(k)
	}
	// One reduction: the operation and root, and the checks' outcome
	// (computed as if every rank called the same operation with the same
	// root, which it then did; when they differ, this rank's prepare may
	// have encoded values for nothing, on that failure path only).
	// When the words differ, every rank that called a data collective
	// fails, whatever rank 0 called.
	word := dataWord | int64(op)<<32 | int64(uint32(r))
	agreed, _ := k.PreflightAgree(word, false, local, func(int64) *failure {
		return &failure{Code: failRoot, Err: ErrOptionsDiffer, Message: fmt.Sprintf(
			"ranks called different collectives or passed different roots (rank %d called %s with root %d)", k.Rank, op, root)}
	})
	if agreed != nil {
		return &CollectiveError{Kind: KindPreflight, Rank: agreed.Rank, Op: op.String(), Message: agreed.Message, err: preflightCause(agreed)}
	}
	fault := move(k)
	key, code, msg := int64(coll.NoError), int32(0), ""
	if fault != nil {
		key, code, msg = int64(k.Rank), int32(fault.kind), fault.msg
	}
	w, code, msg, err := k.ConvergeCoded(key, code, msg)
	if err != nil {
		k.AbortTransport(err)
	}
	if w == coll.NoError {
		return nil
	}
	kind := ErrorKind(code)
	if kind != KindWire && kind != KindProtocol {
		k.AbortProtocol(fmt.Sprintf("converged data-collective error kind %d", code))
	}
	return &CollectiveError{Kind: kind, Rank: int(w % int64(k.Size)), Op: op.String(), Message: msg}
}

// checkSupplied is the preflight rule that exactly the root supplies a value.
func checkSupplied(k *coll.Coll, root int, present bool, what string) *failure {
	switch {
	case k.Rank == root && !present:
		return &failure{Code: failPayload, Err: ErrPayload, Message: fmt.Sprintf("root rank %d supplied None; it must supply %s", root, what)}
	case k.Rank != root && present:
		return &failure{Code: failPayload, Err: ErrPayload, Message: fmt.Sprintf("rank %d supplied %s, but only the root (rank %d) may", k.Rank, what, root)}
	}
	return nil
}

// encodeSplit encodes the split frame of one data-collective value for dest, or
// returns the preflight failure.
func encodeSplit[T any](k *coll.Coll, kind wire.Kind, dest int, v T, what string) (head, body []byte, f *failure) {
	head, body, err := coll.SplitFrame(wire.Header{Version: wire.Version, Kind: kind, Count: 1, BatchID: uint64(dest)}, v)
	if err != nil {
		return nil, nil, &failure{Code: failEncode, Message: fmt.Sprintf("rank %d could not encode %s: %v", k.Rank, what, err)}
	}
	return head, body, nil
}

// receiveSplit receives, checks and decodes one data-collective value from src.
func receiveSplit[T any](k *coll.Coll, src int, kind wire.Kind, dest int) (T, *dataFault) {
	var zero T
	h, v, err := coll.RecvSplit[T](k, src, tagData)
	var we *wire.Error
	if err != nil && !errors.As(err, &we) {
		k.AbortTransport(err)
	}
	if err != nil && h.Kind == 0 {
		return zero, frameFault(k, src, err) // the header itself was bad
	}
	if f := checkFrame(k, src, h, kind, dest); f != nil {
		return zero, f
	}
	if err != nil {
		return zero, frameFault(k, src, err)
	}
	return v, nil
}

// frameFault classifies an error of recvFrame or of the checks after it.
// MPI failures abort the job.
func frameFault(k *coll.Coll, src int, err error) *dataFault {
	var we *wire.Error
	if !errors.As(err, &we) {
		k.AbortTransport(err)
	}
	return &dataFault{kind: KindWire, msg: fmt.Sprintf("rank %d, frame from rank %d: %v", k.Rank, src, err)}
}

// checkFrame checks a parsed placement frame's kind, count and destination.
func checkFrame(k *coll.Coll, src int, h wire.Header, kind wire.Kind, dest int) *dataFault {
	if h.Kind != kind || h.Count != 1 || h.BatchID != uint64(dest) {
		return &dataFault{kind: KindProtocol, msg: fmt.Sprintf(
			"rank %d, frame from rank %d: %s frame with %d items for rank %d, expected %s with 1 item for rank %d",
			k.Rank, src, h.Kind, h.Count, h.BatchID, kind, dest)}
	}
	return nil
}

// bcastValue broadcasts the root's value v and returns the decoded copy on
// the other ranks. The root splits the frame into a head (header and the
// start of the payload) and a body (for a bulk value, a view of v's memory:
// no copy); every rank takes part in three MPI_Bcast calls of sizes fixed by
// the first (the two lengths), so every rank receives everything, whatever
// later fails to decode. Receivers of a bulk value receive the body straight
// into the returned slice.
func bcastValue[T any](k *coll.Coll, root int, head, body []byte) (T, *dataFault) {
	var zero T
	var pre [16]byte
	if k.Rank == root {
		binary.LittleEndian.PutUint64(pre[0:], uint64(len(head)))
		binary.LittleEndian.PutUint64(pre[8:], uint64(len(body)))
	}
	if err := k.Bcast(root, pre[:]); err != nil {
		k.AbortTransport(err)
	}
	hn, bn := binary.LittleEndian.Uint64(pre[0:]), binary.LittleEndian.Uint64(pre[8:])
	if hn < wire.HeaderSize || hn > uint64(wire.MaxBytes) || bn > uint64(wire.MaxBytes)-hn {
		// The root checked both lengths when it encoded the value.
		k.AbortProtocol(fmt.Sprintf("broadcast frame lengths %d+%d outside [%d, %d]", hn, bn, wire.HeaderSize, wire.MaxBytes))
	}
	var v T
	if k.Rank != root {
		head = make([]byte, hn)
		v, body = wire.BodyBuffer[T](int(bn))
	}
	if err := k.Bcast(root, head); err != nil {
		k.AbortTransport(err)
	}
	if bn > 0 {
		if err := k.Bcast(root, body); err != nil {
			k.AbortTransport(err)
		}
	}
	if k.Rank == root {
		return zero, nil
	}
	h, err := wire.ParseHeader(head)
	if err == nil && h.Len != hn-wire.HeaderSize+bn {
		err = &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf(
			"header announces %d payload bytes, frame carries %d", h.Len, hn-wire.HeaderSize+bn)}
	}
	if err != nil {
		return zero, frameFault(k, root, err)
	}
	if f := checkFrame(k, root, h, wire.KindBroadcast, 0); f != nil {
		return zero, f
	}
	v, err = wire.JoinValue(head[wire.HeaderSize:], v, body)
	if err != nil {
		return zero, frameFault(k, root, err)
	}
	return v, nil
}

// Maybe holds a value or nothing. Collective calls use it where only one
// rank supplies a value, so that "this rank supplies nothing" ([None]) stays
// distinct from "this rank supplies an empty value" ([Some] of an empty slice).
type Maybe[T any] struct {
	v  T
	ok bool
}

// Some returns a [Maybe] holding v.
func Some[T any](v T) Maybe[T] { return Maybe[T]{v: v, ok: true} }

// None returns an empty [Maybe].
func None[T any]() Maybe[T] { return Maybe[T]{} }

// Get returns the value and whether there is one.
func (m Maybe[T]) Get() (T, bool) { return m.v, m.ok }

// Present reports whether m holds a value.
func (m Maybe[T]) Present() bool { return m.ok }
