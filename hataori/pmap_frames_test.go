//go:build mpirt || mpicgo

package hataori

import (
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

func TestTaskAndResultFramesRoundTrip(t *testing.T) {
	items := []string{"a", "bb", "ccc"}
	buf, err := taskFrame(nil, 7, 10, items)
	if err != nil {
		t.Fatal(err)
	}
	h, err := wire.ParseHeader(buf)
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind != wire.KindTask || h.BatchID != 7 || h.Count != 3 || h.Len != uint64(len(buf)-wire.HeaderSize) {
		t.Fatalf("header %+v", h)
	}
	idx, rest, err := splitIndices(h, buf[wire.HeaderSize:])
	if err != nil || !reflect.DeepEqual(idx, []int64{10, 11, 12}) {
		t.Fatalf("indices %v %v", idx, err)
	}
	got, err := wire.DecodeItemsOwned[string](rest, int(h.Count))
	if err != nil || !reflect.DeepEqual(got, items) {
		t.Fatalf("items %v %v", got, err)
	}

	res := [][]float64{{1, 2}, nil, {}}
	buf, err = wholeResult(nil, 7, idx, res)
	if err != nil {
		t.Fatal(err)
	}
	h, _ = wire.ParseHeader(buf)
	idx2, rest, err := splitIndices(h, buf[wire.HeaderSize:])
	if err != nil || !reflect.DeepEqual(idx2, idx) || h.Status != statusOK || h.Kind != wire.KindResult {
		t.Fatalf("result header %+v, %v %v", h, idx2, err)
	}
	back, err := wire.DecodeItemsOwned[[]float64](rest, 3)
	if err != nil || !reflect.DeepEqual(back, res) {
		t.Fatalf("results %v %v", back, err)
	}
}

func TestFaultAndControlFrames(t *testing.T) {
	buf := faultFrame(3, statusUser, []int64{4, 5}, wireFault{Index: 5, Message: "boom"})
	h, _ := wire.ParseHeader(buf)
	idx, rest, err := splitIndices(h, buf[wire.HeaderSize:])
	if err != nil || h.Status != statusUser || !reflect.DeepEqual(idx, []int64{4, 5}) {
		t.Fatalf("%+v %v %v", h, idx, err)
	}
	f, err := wire.DecodeValue[wireFault](rest)
	if err != nil || f.Index != 5 || f.Message != "boom" {
		t.Fatalf("fault %+v %v", f, err)
	}
	stop := stopFrame(1234)
	h, _ = wire.ParseHeader(stop)
	if n, err := parseStop(stop[wire.HeaderSize:]); h.Kind != wire.KindStop || err != nil || n != 1234 {
		t.Fatalf("STOP %+v %d %v", h, n, err)
	}
	if _, err := parseStop(stop[wire.HeaderSize+1:]); !errors.Is(err, &wire.Error{Kind: wire.ErrLength}) {
		t.Fatalf("short STOP: %v", err)
	}
	ready := emptyFrame(wire.KindReady, statusCanceled)
	if h, err := wire.ParseHeader(ready); err != nil || h.Status != statusCanceled || h.Len != 0 || len(ready) != wire.HeaderSize {
		t.Fatalf("READY %+v %v", h, err)
	}
}

func TestSplitIndicesRejectsBadPayloads(t *testing.T) {
	h := wire.Header{Kind: wire.KindResult, Count: 3}
	if _, _, err := splitIndices(h, make([]byte, 23)); !errors.Is(err, &wire.Error{Kind: wire.ErrTruncated}) {
		t.Fatalf("truncated: %v", err)
	}
	p := rawIndices([]int64{0})[wire.HeaderSize:]
	p[7] = 0x80 // 1<<63 does not fit int64
	if _, _, err := splitIndices(wire.Header{Count: 1}, p); !errors.Is(err, &wire.Error{Kind: wire.ErrOverflow}) {
		t.Fatalf("overflow: %v", err)
	}
	h.Count = math.MaxUint32
	if _, _, err := splitIndices(h, make([]byte, 64)); !errors.Is(err, &wire.Error{Kind: wire.ErrTruncated}) {
		t.Fatalf("huge count: %v", err)
	}
}

// emptyFrame builds an empty READY or DRAIN.
func emptyFrame(kind wire.Kind, status uint8) []byte {
	return sealFrame(make([]byte, wire.HeaderSize), wire.Header{Kind: kind, Status: status}, 0)
}

// wholeResult is resultFrame without segments: every result in the frame.
func wholeResult[U any](dst []byte, id int64, indices []int64, out []U) ([]byte, error) {
	f, _, err := resultFrameMin(dst, id, indices, out, 0)
	return f, err
}

// wholePartial is partialFrame without segments.
func wholePartial[U any](dst []byte, id int64, indices []int64, faults []wireFault, results []U) ([]byte, error) {
	f, _, err := partialFrameMin(dst, id, indices, faults, results, 0)
	return f, err
}
