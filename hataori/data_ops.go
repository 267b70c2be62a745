package hataori

import (
	"context"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// Broadcast returns the root's value on every rank of comm. Every rank calls
// it, in the same collective order, with the same root; only the root passes
// Some(value), every other rank None. The root gets its own value back (an
// owned move, not a copy); the other ranks get a decoded copy. The root
// encodes the value once, before any data moves, and sends it with
// MPI_Bcast; a []byte or numeric slice goes straight from the root's slice
// into the receivers' new slices, with no copy on either side. With one rank
// nothing is encoded.
//
// ctx is checked once, locally, before the call starts (a done context is a
// preflight failure on every rank); a collective call cannot be abandoned
// midway, so ctx is not consulted afterwards.
//
// Every rank returns the same *CollectiveError on failure: kind
// KindPreflight when a check failed before any data moved (root out of
// range or different between ranks, a value on the wrong rank, an encoding
// failure or a value over the wire limit, or a type T whose values cannot
// cross ranks exactly, which also matches ErrUnsupportedType and is refused
// even on one rank), KindWire when a rank could
// not decode what it received, KindProtocol for an unexpected frame.
// The communicator stays usable after any of them.
//
// Broadcast, Scatter and Gather run on the calling goroutine, which must be
// the MPI main thread, and use a private duplicate of comm, so messages the
// caller has pending on comm are never consumed. A panic in user code
// running on the calling goroutine during the call, e.g. a custom msgpack
// encoder or decoder of the value, aborts the job with ExitPanic.
func Broadcast[T any](ctx context.Context, comm Comm, root int, rootValue Maybe[T]) (T, error) {
	var head, body []byte
	var out T
	err := dataCall(ctx, comm, opBroadcast, root, checkWireType[T](),
		func(k *coll.Coll) *failure {
			if f := checkSupplied(k, root, rootValue.Present(), "a value"); f != nil {
				return f
			}
			if k.Rank != root || k.Size == 1 {
				return nil
			}
			v, _ := rootValue.Get()
			var err error
			head, body, err = wire.SplitValue(make([]byte, wire.HeaderSize, wire.HeaderSize+8), v)
			if err != nil {
				return &failure{Code: failEncode, Message: fmt.Sprintf("rank %d could not encode the broadcast value: %v", k.Rank, err)}
			}
			wire.Header{Version: wire.Version, Kind: wire.KindBroadcast, Count: 1,
				Len: uint64(len(head) - wire.HeaderSize + len(body))}.Put(head)
			return nil
		},
		func(k *coll.Coll) *dataFault {
			if k.Size == 1 {
				out, _ = rootValue.Get()
				return nil
			}
			v, f := bcastValue[T](k, root, head, body)
			if k.Rank == root {
				out, _ = rootValue.Get()
			} else {
				out = v
			}
			return f
		})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// Scatter hands shard i of the root's rootShards to rank i and returns this
// rank's shard. Only the root passes Some(shards), with exactly one shard per
// rank of comm (rank order); every other rank passes None. The root's own
// shard is an owned move; every other shard is encoded by the root before
// any data moves (an encoding failure of any shard is a preflight failure on
// every rank and sends nothing) and sent to its rank as one split frame (a
// []byte or numeric slice travels from the root's slice into the receiver's
// new slice with no copy).
//
// Context, errors, threads and communicator use are as for Broadcast; a
// shard count other than the world size is a KindPreflight failure.
func Scatter[T any](ctx context.Context, comm Comm, root int, rootShards Maybe[[]T]) (T, error) {
	var heads, bodies [][]byte
	var out T
	err := dataCall(ctx, comm, opScatter, root, checkWireType[T](),
		func(k *coll.Coll) *failure {
			if f := checkSupplied(k, root, rootShards.Present(), "shards"); f != nil {
				return f
			}
			if k.Rank != root {
				return nil
			}
			shards, _ := rootShards.Get()
			if len(shards) != k.Size {
				return &failure{Code: failPayload, Err: ErrPayload, Message: fmt.Sprintf(
					"root rank %d supplied %d shards for %d ranks", root, len(shards), k.Size)}
			}
			heads, bodies = make([][]byte, k.Size), make([][]byte, k.Size)
			for i := range shards {
				if i == root {
					continue
				}
				var f *failure
				if heads[i], bodies[i], f = encodeSplit(k, wire.KindScatter, i, shards[i], fmt.Sprintf("shard %d", i)); f != nil {
					return f
				}
			}
			return nil
		},
		func(k *coll.Coll) *dataFault {
			if k.Rank == root {
				shards, _ := rootShards.Get()
				for i := range heads {
					if i == root {
						continue
					}
					if err := k.SendSplit(i, tagData, heads[i], bodies[i]); err != nil {
						k.AbortTransport(err)
					}
					heads[i], bodies[i] = nil, nil
				}
				out = shards[root]
				return nil
			}
			var f *dataFault
			out, f = receiveSplit[T](k, root, wire.KindScatter, k.Rank)
			return f
		})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// Gather collects value from every rank of comm on the root: the root gets a
// non-nil slice of all values in rank order, every other rank gets nil.
// Every rank passes a value. The root's own value is an owned move; every
// other rank encodes its value before any data moves (an encoding failure
// on any rank is a preflight failure on every rank and sends nothing) and
// sends it to the root as one split frame (a []byte or numeric slice travels
// with no copy). The root receives every frame, in rank order, even after
// one failed to decode.
//
// Context, errors, threads and communicator use are as for Broadcast.
func Gather[T any](ctx context.Context, comm Comm, root int, value T) ([]T, error) {
	var head, body []byte
	var out []T
	err := dataCall(ctx, comm, opGather, root, checkWireType[T](),
		func(k *coll.Coll) *failure {
			if k.Rank == root {
				return nil
			}
			var f *failure
			head, body, f = encodeSplit(k, wire.KindGather, root, value, "its value")
			return f
		},
		func(k *coll.Coll) *dataFault {
			if k.Rank != root {
				if err := k.SendSplit(root, tagData, head, body); err != nil {
					k.AbortTransport(err)
				}
				return nil
			}
			out = make([]T, k.Size)
			out[root] = value
			var first *dataFault
			for i := 0; i < k.Size; i++ {
				if i == root {
					continue
				}
				v, f := receiveSplit[T](k, i, wire.KindGather, root)
				out[i] = v
				if first == nil {
					first = f
				}
			}
			return first
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}
