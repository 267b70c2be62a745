//go:build mpirt || mpicgo

package hataori

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestCollectiveMPI checks the shared collective machinery (agree,
// agreeAndCompare, converge, frames) on real MPI jobs.
func TestCollectiveMPI(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Test: "TestCollectiveMPI", Timeout: 120 * time.Second})
		}
		return
	}
	rank, size := mpitest.Init(t)
	world, err := World()
	if err != nil {
		t.Fatal(err)
	}
	k, err := openCollective(world)
	if err != nil {
		t.Fatal(err)
	}
	if k.Rank != rank || k.Size != size || k.Comm == mpi.World() {
		t.Fatalf("collective = %+v, want a duplicate with rank %d size %d", k, rank, size)
	}
	testAgree(t, k)
	testAgreeInt64(t, k)
	testConverge(t, k)
	if size > 1 {
		testFrames(t, k)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
}

func testAgree(t *testing.T, k *coll.Coll) {
	if af, err := k.Agree(nil); err != nil || af != nil {
		t.Errorf("agree(nil) = %+v, %v", af, err)
	}
	// Failures on every odd rank and on the last: the lowest wins.
	var local *failure
	if k.Rank%2 == 1 || k.Rank == k.Size-1 {
		local = &failure{Code: failBusy, Message: fmt.Sprintf("rank %d busy ✗", k.Rank)}
	}
	want := 1
	if k.Size == 1 {
		want = 0
	}
	af, err := k.Agree(local)
	if err != nil || af == nil || af.Rank != want || af.Code != failBusy || af.Message != fmt.Sprintf("rank %d busy ✗", want) {
		t.Errorf("agree = %+v, %v; want rank %d failBusy", af, err, want)
	}
	// A message over the bound arrives bounded, cut at a character boundary.
	long := strings.Repeat("é", errmsg.Max)
	if k.Rank == 0 {
		local = &failure{Code: failEncode, Message: long}
	} else {
		local = nil
	}
	af, err = k.Agree(local)
	if err != nil || af == nil || af.Message != errmsg.Bound(long) || len(af.Message) != errmsg.Max {
		t.Errorf("agree with a long message: %d bytes, %v", len(af.Message), err)
	}
}

func testAgreeInt64(t *testing.T, k *coll.Coll) {
	// Every rank passes v: same, and the votes decide (here rank 0, or no
	// rank, failed).
	for _, v := range []int64{0, 1, -1, math.MinInt64, math.MaxInt64} {
		same, af, raised, err := k.AgreeAndCompare(v, false, nil)
		if err != nil || !same || af != nil || raised {
			t.Errorf("agreeAndCompare(%d) on every rank, all passing = %v, %+v, %v, %v", v, same, af, raised, err)
		}
		// The flag raised by the last rank alone reaches every rank.
		same, af, raised, err = k.AgreeAndCompare(v, k.Rank == k.Size-1, nil)
		if err != nil || !same || af != nil || !raised {
			t.Errorf("agreeAndCompare(%d) with the last rank's flag = %v, %+v, %v, %v", v, same, af, raised, err)
		}
		var local *failure
		if k.Rank == 0 {
			local = &failure{Code: failBusy, Message: "busy"}
		}
		same, af, _, err = k.AgreeAndCompare(v, false, local)
		if err != nil || !same || af == nil || af.Rank != 0 || af.Code != failBusy || af.Message != "busy" {
			t.Errorf("agreeAndCompare(%d) with rank 0 failing = %v, %+v, %v", v, same, af, err)
		}
	}
	if k.Size == 1 {
		return
	}
	pairs := [][2]int64{{0, 1}, {math.MinInt64, math.MaxInt64}, {math.MinInt64, math.MinInt64 + 1}, {-1, 0}, {math.MaxInt64 - 1, math.MaxInt64}}
	for _, p := range pairs {
		v := p[0]
		if k.Rank == k.Size-1 {
			v = p[1]
		}
		// A differing value wins over the votes, which are then unused.
		if same, af, raised, err := k.AgreeAndCompare(v, true, &failure{Code: failBusy}); err != nil || same || af != nil || raised {
			t.Errorf("agreeAndCompare with %d and %d = %v, %+v, %v; want not same", p[0], p[1], same, af, err)
		}
	}
}

func testConverge(t *testing.T, k *coll.Coll) {
	if w, m, err := converge(k, coll.NoError, "ignored"); err != nil || w != coll.NoError || m != "" {
		t.Errorf("converge with no error = %d, %q, %v", w, m, err)
	}
	// Simultaneous errors on every rank with keys ((task*classes+class)*size
	// + rank): the smallest task wins even from a higher rank, and keys above
	// 2^32 (which unsigned or 32-bit reductions would get wrong) converge.
	task := int64(k.Size - k.Rank) // the last rank has the smallest task
	key := ((task<<33)*3+1)*int64(k.Size) + int64(k.Rank)
	w, m, err := converge(k, key, fmt.Sprintf("task %d failed on rank %d", task, k.Rank))
	wantKey := ((int64(1)<<33)*3+1)*int64(k.Size) + int64(k.Size-1)
	if err != nil || w != wantKey || m != fmt.Sprintf("task 1 failed on rank %d", k.Size-1) {
		t.Errorf("converge = %d, %q, %v; want %d from rank %d", w, m, err, wantKey, k.Size-1)
	}
	// Only rank 0 reports; the message may be empty.
	key = coll.NoError
	if k.Rank == 0 {
		key = 0
	}
	if w, m, err := converge(k, key, ""); err != nil || w != 0 || m != "" {
		t.Errorf("converge from rank 0 = %d, %q, %v", w, m, err)
	}
	big := int64(1) << 60
	if w, c, m, err := k.ConvergeCoded(big*int64(k.Size)+int64(k.Rank), int32(k.Rank+7), "x"); err != nil ||
		w != big*int64(k.Size) || c != 7 || m != "x" {
		t.Errorf("convergeCoded = %d, %d, %q, %v", w, c, m, err)
	}
}

// testFrames sends malformed and valid frames from rank 1 to rank 0 and
// checks that every malformed one is reported as a typed wire error while
// the next frame still arrives intact (each was received whole).
func testFrames(t *testing.T, k *coll.Coll) {
	const tag = 5
	good, err := frameItems(wire.Header{Version: wire.Version, Kind: wire.KindResult, BatchID: 3}, []string{"a", "β"})
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	bad := []struct {
		frame []byte
		kind  wire.ErrorKind
	}{
		{corrupt(func(b []byte) []byte { b[0] = 9; return b }), wire.ErrVersion},
		{corrupt(func(b []byte) []byte { b[1] = 0; return b }), wire.ErrKind},
		{corrupt(func(b []byte) []byte { return append(b, 0) }), wire.ErrLength},
		{corrupt(func(b []byte) []byte { return b[:len(b)-1] }), wire.ErrLength},
		{corrupt(func(b []byte) []byte { return b[:wire.HeaderSize-1] }), wire.ErrTruncated},
		{make([]byte, 0), wire.ErrTruncated},
		{make([]byte, 1000), wire.ErrLength}, // over the lowered MaxBytes below
	}
	switch k.Rank {
	case 1:
		for _, b := range bad {
			if err := mpi.Send(k.Comm, b.frame, 0, tag); err != nil {
				t.Fatal(err)
			}
			if err := k.SendFrame(0, tag, good); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.SendFrame(0, tag, frameEmpty(wire.Header{Version: wire.Version, Kind: wire.KindDrain})); err != nil {
			t.Fatal(err)
		}
	case 0:
		old := wire.MaxBytes
		wire.MaxBytes = 500
		for i, b := range bad {
			_, _, src, err := k.RecvFrame(1, tag)
			if !errors.Is(err, &wire.Error{Kind: b.kind}) || src != 1 {
				t.Errorf("bad frame %d: src %d, err %v; want %v", i, src, err, b.kind)
			}
			h, payload, src, err := k.RecvFrame(mpi.AnySource(), tag)
			if err != nil || src != 1 || h.Kind != wire.KindResult || h.Count != 2 || h.BatchID != 3 {
				t.Fatalf("good frame after bad frame %d: %+v from %d, %v", i, h, src, err)
			}
			items, err := wire.DecodeItemsOwned[string](payload, int(h.Count))
			if err != nil || len(items) != 2 || items[1] != "β" {
				t.Errorf("good frame items = %q, %v", items, err)
			}
		}
		wire.MaxBytes = old
		var ok bool
		var src int
		for !ok {
			if ok, src, err = k.Iprobe(tag); err != nil {
				t.Fatal(err)
			}
		}
		h, payload, _, err := k.RecvFrame(src, tag)
		if err != nil || src != 1 || h.Kind != wire.KindDrain || len(payload) != 0 {
			t.Errorf("DRAIN frame = %+v, %d bytes from %d, %v", h, len(payload), src, err)
		}
	}
	testSplitFrames(t, k)
	if ok, _, err := k.Iprobe(tag); err != nil || ok {
		t.Errorf("iprobe after the exchange = %v, %v; want nothing pending", ok, err)
	}
	if err := k.SendFrame(0, tag, make([]byte, 3)); !errors.Is(err, &wire.Error{Kind: wire.ErrLength}) {
		t.Errorf("sendFrame of a 3-byte frame = %v, want ErrLength", err)
	}
}

// frameItems (test helper) builds the frame of a batch: h (Count and Len filled in)
// followed by the items' payloads.
func frameItems[T any](h wire.Header, items []T) ([]byte, error) {
	if uint64(len(items)) > uint64(^uint32(0)) {
		return nil, &wire.Error{Kind: wire.ErrCount, Detail: fmt.Sprintf("%d items exceed the frame count limit", len(items))}
	}
	buf, err := wire.EncodeItems(make([]byte, wire.HeaderSize), items)
	if err != nil {
		return nil, err
	}
	h.Count = uint32(len(items))
	h.Len = uint64(len(buf) - wire.HeaderSize)
	h.Put(buf)
	return buf, nil
}

// frameEmpty (test helper) builds a payload-free frame (READY, STOP, DRAIN).
func frameEmpty(h wire.Header) []byte {
	buf := make([]byte, wire.HeaderSize)
	h.Len = 0
	h.Put(buf)
	return buf
}

// testSplitFrames sends split frames from rank 1 to rank 0: malformed heads
// (both messages are still consumed, so the next frame arrives intact) and
// good ones, whose bulk body lands in the receiver's value.
func testSplitFrames(t *testing.T, k *coll.Coll) {
	const tag = 20
	vals := []float64{1, 2, 3, 4}
	head, body, err := coll.SplitFrame(wire.Header{Version: wire.Version, Kind: wire.KindGather, Count: 1}, vals)
	if err != nil {
		t.Fatal(err)
	}
	badVersion := append([]byte(nil), head...)
	badVersion[0] = wire.Version + 1
	badLen := append([]byte(nil), head...)
	badLen[16]++
	bad := []struct {
		head []byte
		kind wire.ErrorKind
	}{{badVersion, wire.ErrVersion}, {badLen, wire.ErrLength}, {head[:5], wire.ErrTruncated}}
	switch k.Rank {
	case 1:
		for _, b := range bad {
			if err := k.SendSplit(0, tag, b.head, body); err != nil {
				t.Fatal(err)
			}
			if err := k.SendSplit(0, tag, head, body); err != nil {
				t.Fatal(err)
			}
		}
		// A receiver type that cannot hold the bulk body.
		if err := k.SendSplit(0, tag, head, body); err != nil {
			t.Fatal(err)
		}
	case 0:
		for i, b := range bad {
			if _, _, err := coll.RecvSplit[[]float64](k, 1, tag); !errors.Is(err, &wire.Error{Kind: b.kind}) {
				t.Errorf("bad split head %d: %v, want %v", i, err, b.kind)
			}
			h, v, err := coll.RecvSplit[[]float64](k, 1, tag)
			if err != nil || h.Kind != wire.KindGather || len(v) != 4 || v[3] != 4 {
				t.Errorf("good split frame after bad head %d: %+v, %v, %v", i, h, v, err)
			}
		}
		if _, v, err := coll.RecvSplit[map[string]int](k, 1, tag); !errors.Is(err, &wire.Error{Kind: wire.ErrDecode}) {
			t.Errorf("split frame into a map = %v, %v; want ErrDecode", v, err)
		}
	}
}

// converge is ConvergeCoded without a code, for the convergence tests
// (production code always sends a code, so it lives here).
func converge(k *coll.Coll, key int64, msg string) (int64, string, error) {
	w, _, m, err := k.ConvergeCoded(key, 0, msg)
	return w, m, err
}
