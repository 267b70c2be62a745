//go:build mpirt || mpicgo

package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// placeRank is this process's world rank, read by picky's decoder.
var placeRank int

// pickyReject lists the ranks on which picky refuses to decode anything.
var pickyReject = map[int]bool{}

var (
	errPickyEncode = errors.New("picky: negative values cannot be encoded")
	errPickyDecode = errors.New("picky: this rank cannot hold the value")
)

// picky fails to encode negative values, and to decode on the ranks in
// pickyReject or when the value is 13.
type picky struct{ V int }

func (p picky) EncodeMsgpack(enc *msgpack.Encoder) error {
	if p.V < 0 {
		return errPickyEncode
	}
	return enc.EncodeInt(int64(p.V))
}

func (p *picky) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt()
	if err != nil {
		return err
	}
	if pickyReject[placeRank] || v == 13 {
		return errPickyDecode
	}
	p.V = v
	return nil
}

type placeLeaf struct {
	Label string
	Vals  hataori.Bulk[float64]
}

type placeTree struct {
	Name   string
	Leaves []placeLeaf
	Index  map[string]int
	Next   *placeTree
	Raw    []byte
}

// placeEnv is one rank's view of a data-collective test run.
type placeEnv struct {
	t          *testing.T
	ctx        context.Context
	world      hataori.Comm
	rank, size int
	seq        int
}

func TestDataMPI(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 180 * time.Second})
		}
		return
	}
	rank, size := mpitest.Init(t)
	placeRank = rank
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	e := &placeEnv{t: t, ctx: context.Background(), world: world, rank: rank, size: size}
	e.values()
	e.worldOfOne()
	e.large()
	e.preflightFailures()
	e.encodeFailures()
	e.decodeFailures()
	t.Logf("rank %d of %d: data-collective checks done", rank, size)
}

// values: every root, UTF-8 strings, empty values, nested structs, shard
// and gather order.
func (e *placeEnv) values() {
	t := e.t
	for root := 0; root < e.size; root++ {
		isRoot := e.rank == root
		s := fmt.Sprintf("héllo, 世界 🌍 from root %d", root)
		if got := bcast(e, root, isRoot, s); got != s {
			t.Errorf("Broadcast string root %d = %q", root, got)
		}
		if got := bcast(e, root, isRoot, ""); got != "" {
			t.Errorf("Broadcast empty string root %d = %q", root, got)
		}
		if got := bcast(e, root, isRoot, []float64{}); got == nil || len(got) != 0 {
			t.Errorf("Broadcast empty []float64 root %d = %#v, want empty non-nil", root, got)
		}
		if got := bcast(e, root, isRoot, []float64(nil)); got != nil {
			t.Errorf("Broadcast nil []float64 root %d = %#v, want nil", root, got)
		}
		tree := placeTree{Name: "ρίζα", Leaves: []placeLeaf{{Label: "a", Vals: hataori.Bulk[float64]{1, 2.5}}, {Label: "", Vals: nil}},
			Index: map[string]int{"x": 1, "y": root}, Next: &placeTree{Name: "leaf", Raw: []byte{}}, Raw: []byte{0, 255}}
		if got := bcast(e, root, isRoot, tree); !reflect.DeepEqual(got, tree) {
			t.Errorf("Broadcast tree root %d = %+v", root, got)
		}

		var shards hataori.Maybe[[]placeLeaf]
		if isRoot {
			all := make([]placeLeaf, e.size)
			for i := range all {
				all[i] = placeLeaf{Label: fmt.Sprintf("shard %d ✓", i), Vals: make(hataori.Bulk[float64], i)}
			}
			shards = hataori.Some(all)
		} else {
			shards = hataori.None[[]placeLeaf]()
		}
		shard, err := hataori.Scatter(e.ctx, e.world, root, shards)
		if want := fmt.Sprintf("shard %d ✓", e.rank); err != nil || shard.Label != want || len(shard.Vals) != e.rank {
			t.Errorf("Scatter root %d = %+v, %v; want label %q with %d values", root, shard, err, want, e.rank)
		}
		var empty hataori.Maybe[[]string]
		if isRoot {
			empty = hataori.Some(make([]string, e.size))
		}
		if got, err := hataori.Scatter(e.ctx, e.world, root, empty); err != nil || got != "" {
			t.Errorf("Scatter of empty strings root %d = %q, %v", root, got, err)
		}

		mine := placeLeaf{Label: fmt.Sprintf("rank %d", e.rank), Vals: hataori.Bulk[float64]{float64(e.rank)}}
		all, err := hataori.Gather(e.ctx, e.world, root, mine)
		switch {
		case err != nil:
			t.Errorf("Gather root %d: %v", root, err)
		case !isRoot && all != nil:
			t.Errorf("Gather root %d: non-root rank got %v", root, all)
		case isRoot:
			if len(all) != e.size {
				t.Fatalf("Gather root %d: %d values for %d ranks", root, len(all), e.size)
			}
			for i, v := range all {
				if v.Label != fmt.Sprintf("rank %d", i) || len(v.Vals) != 1 || v.Vals[0] != float64(i) {
					t.Errorf("Gather root %d: value %d = %+v", root, i, v)
				}
			}
		}
		empties, err := hataori.Gather(e.ctx, e.world, root, []byte{})
		if err != nil || (isRoot && (len(empties) != e.size || empties[0] == nil || len(empties[e.size-1]) != 0)) {
			t.Errorf("Gather of empty []byte root %d = %#v, %v", root, empties, err)
		}
	}
}

// bcast broadcasts v from root (v is ignored elsewhere) and fails the test
// on error.
func bcast[T any](e *placeEnv, root int, isRoot bool, v T) T {
	e.t.Helper()
	m := hataori.None[T]()
	if isRoot {
		m = hataori.Some(v)
	}
	got, err := hataori.Broadcast(e.ctx, e.world, root, m)
	if err != nil {
		e.t.Errorf("Broadcast %T from root %d: %v", v, root, err)
	}
	return got
}

// worldOfOne: with one rank nothing goes through the codec, even for values
// that could not be encoded; with more, the root encodes a broadcast once.
func (e *placeEnv) worldOfOne() {
	t := e.t
	enc0, dec0 := wire.Counts()
	v := []float64{1, 2, 3}
	got := bcast(e, 0, e.rank == 0, v)
	enc1, dec1 := wire.Counts()
	if e.size == 1 {
		if &got[0] != &v[0] {
			t.Errorf("Broadcast on one rank copied the value instead of moving it")
		}
		if _, err := hataori.Gather(e.ctx, e.world, 0, picky{V: -1}); err != nil {
			t.Errorf("Gather of an unencodable value on one rank: %v", err)
		}
		if _, err := hataori.Scatter(e.ctx, e.world, 0, hataori.Some([]picky{{V: -1}})); err != nil {
			t.Errorf("Scatter of an unencodable shard on one rank: %v", err)
		}
		enc2, dec2 := wire.Counts()
		if wire.Counting && (enc2 != enc0 || dec2 != dec0) {
			t.Errorf("world size one moved values through the codec: %d encodes, %d decodes", enc2-enc0, dec2-dec0)
		}
		return
	}
	wantEnc, wantDec := uint64(0), uint64(1)
	if e.rank == 0 {
		wantEnc, wantDec = 1, 0
	}
	if wire.Counting && (enc1-enc0 != wantEnc || dec1-dec0 != wantDec) {
		t.Errorf("Broadcast on rank %d: %d encodes, %d decodes; want %d, %d", e.rank, enc1-enc0, dec1-dec0, wantEnc, wantDec)
	}
}

// large moves a 64 MiB value through each operation.
func (e *placeEnv) large() {
	t := e.t
	const n = 64 << 20
	root := e.size - 1
	var big []float64
	if e.rank == root {
		big = make([]float64, n/8)
		for i := range big {
			big[i] = float64(i)
		}
	}
	got := bcast(e, root, e.rank == root, big)
	if len(got) != n/8 || got[12345] != 12345 || got[n/8-1] != float64(n/8-1) {
		t.Errorf("64 MiB Broadcast: %d values", len(got))
	}
	got = nil
	// Scatter and Gather a 64 MiB []byte to/from rank 0 (the last rank is root).
	var shards hataori.Maybe[[]([]byte)]
	if e.rank == root {
		s := make([][]byte, e.size)
		s[0] = make([]byte, n)
		s[0][n-1] = 7
		shards = hataori.Some(s)
	}
	shard, err := hataori.Scatter(e.ctx, e.world, root, shards)
	if err != nil || (e.rank == 0 && (len(shard) != n || shard[n-1] != 7)) || (e.rank != 0 && len(shard) != 0) {
		t.Errorf("64 MiB Scatter: %d bytes, %v", len(shard), err)
	}
	all, err := hataori.Gather(e.ctx, e.world, root, shard)
	if err != nil || (e.rank == root && (len(all[0]) != n || all[0][n-1] != 7)) {
		t.Errorf("64 MiB Gather: %v", err)
	}
}

// ownMessage sends this rank's own tagged message on the caller's
// communicator to the next rank before a failing call; ownCheck receives
// the previous rank's after it, showing the call consumed nothing of the
// caller's.
func (e *placeEnv) ownMessage() {
	e.seq++
	if e.size == 1 {
		return
	}
	msg := fmt.Sprintf("own %d from %d", e.seq, e.rank)
	if err := e.world.Send([]byte(msg), (e.rank+1)%e.size, 77); err != nil {
		e.t.Fatalf("own Send: %v", err)
	}
}

// expect checks a converged failure on this rank, then that the caller's
// communicator still carries the caller's message and that a following
// call succeeds and sees the same error text on every rank.
func (e *placeEnv) expect(label string, err error, kind hataori.ErrorKind, rank int, substr string) {
	t := e.t
	t.Helper()
	if e.size > 1 {
		buf := make([]byte, 64)
		prev := (e.rank + e.size - 1) % e.size
		n, rerr := e.world.Recv(buf, prev, 77)
		if want := fmt.Sprintf("own %d from %d", e.seq, prev); rerr != nil || string(buf[:n]) != want {
			t.Errorf("%s: own message after the failure = %q, %v; want %q", label, buf[:n], rerr, want)
		}
	}
	var pe *hataori.CollectiveError
	if !errors.As(err, &pe) {
		t.Errorf("%s: error %v (%T), want a *CollectiveError", label, err, err)
	} else if pe.Kind != kind || pe.Rank != rank || !strings.Contains(pe.Message, substr) {
		t.Errorf("%s: got %v (kind %v, rank %d), want kind %v, rank %d, message containing %q", label, err, pe.Kind, pe.Rank, kind, rank, substr)
	}
	sentinel := map[hataori.ErrorKind]error{hataori.KindPreflight: hataori.KindPreflight,
		hataori.KindWire: hataori.KindWire, hataori.KindProtocol: hataori.KindProtocol}[kind]
	if !errors.Is(err, sentinel) {
		t.Errorf("%s: errors.Is(%v, %v) is false", label, err, sentinel)
	}
	text := fmt.Sprint(err)
	if n := strings.Count(text, "hataori:"); n != 1 {
		t.Errorf("%s: %q says \"hataori:\" %d times, want once", label, text, n)
	}
	texts, gerr := hataori.Gather(e.ctx, e.world, 0, text)
	if gerr != nil {
		t.Fatalf("%s: Gather after the failure: %v", label, gerr)
	}
	for i, s := range texts {
		if s != text {
			t.Errorf("%s: rank %d returned %q, rank 0 %q", label, i, s, text)
		}
	}
}

func (e *placeEnv) preflightFailures() {
	last := e.size - 1
	// Different roots (only possible with two or more ranks).
	if e.size > 1 {
		root := 1
		if e.rank == 0 {
			root = 0
		}
		e.ownMessage()
		_, err := hataori.Broadcast(e.ctx, e.world, root, hataori.Some(1))
		e.expect("different roots", err, hataori.KindPreflight, 0, "different roots")
		// Rank 0 calls Pmap while every other rank calls Broadcast: all
		// fail in the preflight together, matching ErrOptionsDiffer, and
		// the lowest rank that called Broadcast reports.
		var mixed error
		if e.rank == 0 {
			_, mixed = hataori.Pmap(e.ctx, e.world, nil, hataori.Options{}, hataori.Some([]int{1, 2}), func(x int) (int, error) { return x, nil })
			var pe *hataori.PmapError
			if !errors.As(mixed, &pe) || pe.Kind != hataori.KindPreflight || pe.Rank != 1 || !strings.Contains(pe.Message, "called Broadcast") {
				e.t.Errorf("Pmap against Broadcast: %v; want a KindPreflight *PmapError from rank 1 naming Broadcast", mixed)
			}
		} else {
			_, mixed = hataori.Broadcast(e.ctx, e.world, 0, hataori.None[int]())
			var ce *hataori.CollectiveError
			if !errors.As(mixed, &ce) || ce.Kind != hataori.KindPreflight || ce.Rank != 1 || !strings.Contains(ce.Message, "called Broadcast") {
				e.t.Errorf("Broadcast against Pmap: %v; want a KindPreflight *CollectiveError from rank 1 naming Broadcast", mixed)
			}
		}
		if !errors.Is(mixed, hataori.ErrOptionsDiffer) {
			e.t.Errorf("Pmap against Broadcast: %v does not match ErrOptionsDiffer", mixed)
		}
		// A value on a non-root rank.
		e.ownMessage()
		m := hataori.None[string]()
		if e.rank == 0 || e.rank == last {
			m = hataori.Some("x")
		}
		_, err = hataori.Broadcast(e.ctx, e.world, 0, m)
		e.expect("value on a non-root rank", err, hataori.KindPreflight, last, "only the root")
	}
	// None on the root.
	e.ownMessage()
	_, err := hataori.Scatter(e.ctx, e.world, last, hataori.None[[]int]())
	e.expect("no shards on the root", err, hataori.KindPreflight, last, "supplied None; it must supply shards")
	// Root out of range.
	e.ownMessage()
	_, err = hataori.Gather(e.ctx, e.world, e.size, 1)
	e.expect("root out of range", err, hataori.KindPreflight, 0, "out of range")
	// Shard count different from the world size.
	e.ownMessage()
	var shards hataori.Maybe[[]int]
	if e.rank == 0 {
		shards = hataori.Some(make([]int, e.size+1))
	}
	_, err = hataori.Scatter(e.ctx, e.world, 0, shards)
	e.expect("shard count", err, hataori.KindPreflight, 0, fmt.Sprintf("%d shards for %d ranks", e.size+1, e.size))
	// A context already cancelled on the last rank.
	e.ownMessage()
	ctx := e.ctx
	if e.rank == last {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	_, err = hataori.Gather(ctx, e.world, 0, 1)
	e.expect("cancelled context", err, hataori.KindPreflight, last, "context canceled")
}

func (e *placeEnv) encodeFailures() {
	if e.size == 1 {
		return // nothing is encoded on one rank (see worldOfOne)
	}
	last := e.size - 1
	// Gather: a non-root rank's value fails to encode.
	e.ownMessage()
	v := picky{V: e.rank}
	if e.rank == last {
		v.V = -1
	}
	_, err := hataori.Gather(e.ctx, e.world, 0, v)
	e.expect("Gather encode", err, hataori.KindPreflight, last, errPickyEncode.Error())
	// Scatter: one of the root's shards fails to encode.
	e.ownMessage()
	var shards hataori.Maybe[[]picky]
	if e.rank == last {
		s := make([]picky, e.size)
		s[0].V = -1
		shards = hataori.Some(s)
	}
	_, err = hataori.Scatter(e.ctx, e.world, last, shards)
	e.expect("Scatter encode", err, hataori.KindPreflight, last, errPickyEncode.Error())
	// Broadcast: the root's value fails to encode.
	e.ownMessage()
	m := hataori.None[picky]()
	if e.rank == 0 {
		m = hataori.Some(picky{V: -1})
	}
	_, err = hataori.Broadcast(e.ctx, e.world, 0, m)
	e.expect("Broadcast encode", err, hataori.KindPreflight, 0, errPickyEncode.Error())
}

func (e *placeEnv) decodeFailures() {
	if e.size == 1 {
		return
	}
	last := e.size - 1
	// Broadcast: every rank but the root rejects; the lowest (rank 1) wins.
	for r := 1; r < e.size; r++ {
		pickyReject[r] = true
	}
	e.ownMessage()
	_, err := hataori.Broadcast(e.ctx, e.world, 0, someOn(e.rank == 0, picky{V: 5}))
	e.expect("Broadcast decode", err, hataori.KindWire, 1, errPickyDecode.Error())
	clear(pickyReject)
	// Scatter: only the last rank's shard cannot be decoded.
	e.ownMessage()
	var shards hataori.Maybe[[]picky]
	if e.rank == 0 {
		s := make([]picky, e.size)
		s[last].V = 13
		shards = hataori.Some(s)
	}
	_, err = hataori.Scatter(e.ctx, e.world, 0, shards)
	e.expect("Scatter decode", err, hataori.KindWire, last, errPickyDecode.Error())
	// Gather: every sender's value fails to decode on the root; the root
	// still receives every frame and reports the first (rank 0's).
	e.ownMessage()
	_, err = hataori.Gather(e.ctx, e.world, last, picky{V: 13})
	e.expect("Gather decode", err, hataori.KindWire, last, "frame from rank 0")
	// A type mismatch: the receivers expect an int, the root sends text.
	e.ownMessage()
	if e.rank == 0 {
		_, err = hataori.Broadcast(e.ctx, e.world, 0, hataori.Some("not a number"))
	} else {
		_, err = hataori.Broadcast(e.ctx, e.world, 0, hataori.None[int]())
	}
	e.expect("Broadcast type mismatch", err, hataori.KindWire, 1, "decode")
}

func someOn[T any](ok bool, v T) hataori.Maybe[T] {
	if ok {
		return hataori.Some(v)
	}
	return hataori.None[T]()
}
