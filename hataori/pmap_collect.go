package hataori

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// The CollectAll list of failed items travels once, at the end of a call
// that failed, from the root (which learned every failure: its own slots',
// its decode failures, and those the other ranks sent in their RESULTs) to
// every rank, as one msgpack value: the failures in index order, then the
// ranges of items that ended without a result (never ran, or lost when the
// call stopped), which share one message. Its size is that of the failures
// themselves (at most 4096 bytes of message each, plus a few bytes per
// item); nothing is kept per successful item.
// faultList is that value; faultListEntry one failure of it (the
// ItemFailure fields without the original error).
type faultList struct {
	F  []faultListEntry `msgpack:"f"`
	M  []int64          `msgpack:"m"` // missing ranges, lo and hi flattened
	MK int32            `msgpack:"mk"`
	MM string           `msgpack:"mm"`
}

type faultListEntry struct {
	I int64  `msgpack:"i"`
	K int32  `msgpack:"k"`
	R int32  `msgpack:"r"`
	M string `msgpack:"m"`
}

// broadcastFaultList returns the CollectAll list of failed items, the same
// on every rank, in index order, each entry this rank reported carrying
// its original error. e is the converged error, whose kind and rank the
// items without a result are charged to.
func (r *report) broadcastFaultList(e *PmapError) []ItemFailure {
	k := r.k
	var buf []byte
	if k.Rank == r.root {
		slices.SortFunc(r.list, func(a, b ItemFailure) int { return cmp.Compare(a.Index, b.Index) })
		fl := faultList{F: make([]faultListEntry, len(r.list)), MK: int32(e.Kind),
			MM: errmsg.Bound(fmt.Sprintf("no result: the call stopped early (%v error reported by rank %d: %s)", e.Kind, e.Rank, e.Message))}
		for i, f := range r.list {
			fl.F[i] = faultListEntry{I: int64(f.Index), K: int32(f.Kind), R: int32(f.Rank), M: f.Message}
		}
		for _, m := range r.missing {
			fl.M = append(fl.M, int64(m.lo), int64(m.hi))
		}
		var err error
		if buf, err = wire.EncodeValue(nil, fl); err != nil {
			k.AbortProtocol(fmt.Sprintf("encoding the list of failed items: %v", err))
		}
	}
	buf, err := k.BcastBytes(r.root, buf)
	if err != nil {
		k.AbortTransport(err)
	}
	fl, err := wire.DecodeValueOwned[faultList](buf)
	if err != nil || len(fl.M)%2 != 0 {
		k.AbortProtocol(fmt.Sprintf("decoding the list of failed items: %v", err))
	}
	own := map[int]error{}
	for _, f := range r.list {
		if f.Rank == k.Rank && f.err != nil {
			own[f.Index] = f.err
		}
	}
	n := len(fl.F)
	for i := 0; i < len(fl.M); i += 2 {
		n += int(fl.M[i+1] - fl.M[i])
	}
	out := make([]ItemFailure, 0, n)
	for _, f := range fl.F {
		it := ItemFailure{Index: int(f.I), Kind: ErrorKind(f.K), Rank: int(f.R), Message: f.M}
		if it.Rank == k.Rank {
			it.err = own[it.Index]
		}
		out = append(out, it)
	}
	for i := 0; i < len(fl.M); i += 2 {
		for j := fl.M[i]; j < fl.M[i+1]; j++ {
			out = append(out, ItemFailure{Index: int(j), Kind: ErrorKind(fl.MK), Rank: -1, Message: fl.MM})
		}
	}
	slices.SortFunc(out, func(a, b ItemFailure) int { return cmp.Compare(a.Index, b.Index) })
	return out
}
