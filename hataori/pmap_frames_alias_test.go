//go:build mpirt || mpicgo

package hataori

import (
	"errors"
	"reflect"
	"testing"
	"unsafe"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// within reports whether v's data lies in buf's memory.
func within(v []float64, buf []byte) bool {
	if len(v) == 0 || len(buf) == 0 {
		return false
	}
	p, b := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&buf[0]))
	return p >= b && p < b+uintptr(len(buf))
}

// received copies a frame into a buffer placed as its receiver places it
// (the root receives RESULTs with RecvFrameTail, leaving their timing
// trailer out of the placement) and returns the parsed header and payload.
func received(t *testing.T, frame []byte) (wire.Header, []byte, []byte) {
	t.Helper()
	tail := 0
	if wire.Kind(frame[1]) == wire.KindResult {
		tail = resultTrailer
	}
	buf := coll.FrameBufferTail(len(frame), tail)
	copy(buf, frame)
	h, err := wire.ParseHeader(buf)
	if err != nil {
		t.Fatal(err)
	}
	return h, buf[wire.HeaderSize:], buf
}

// A bulk RESULT crosses with one copy per side beyond MPI's: encoded
// straight after the indices, decoded by aliasing the received frame.
func TestResultFrameDecodesByAliasing(t *testing.T) {
	for _, n := range []int{1, 31, 40, 8191, 8192, 1 << 17} { // bin8, bin16 and bin32 headers
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i) + 0.5
		}
		for _, batch := range [][]int64{{42}, {3, 4, 5, 6}} {
			out := make([][]float64, len(batch))
			out[0] = v
			for i := 1; i < len(out); i++ {
				out[i] = []float64{float64(i)}
			}
			frame, err := wholeResult(nil, 9, batch, out)
			if err != nil {
				t.Fatal(err)
			}
			h, payload, buf := received(t, frame)
			idx, rest, err := splitIndices(h, payload)
			if err != nil || !reflect.DeepEqual(idx, batch) {
				t.Fatalf("indices %v %v", idx, err)
			}
			got, err := wire.DecodeItemsOwned[[]float64](rest, len(idx))
			if err != nil || !reflect.DeepEqual(got, out) {
				t.Fatalf("n=%d batch %v: decode %v", n, batch, err)
			}
			// The frame buffer's placement is exact for one index, and
			// for more whenever the first value needs a bin32 header.
			if (len(batch) == 1 || n*8 > 0xffff) && !within(got[0], buf) {
				t.Errorf("n=%d batch %v: the first result was copied out of the frame", n, batch)
			}
		}
	}
}

func TestFrameIntoReusesMemory(t *testing.T) {
	v := make([]float64, 1000)
	first, err := wholeResult(nil, 1, []int64{0}, [][]float64{v})
	if err != nil {
		t.Fatal(err)
	}
	v[0] = 5
	second, err := wholeResult(first, 2, []int64{1}, [][]float64{v})
	if err != nil {
		t.Fatal(err)
	}
	if &second[0] != &first[0] || len(second) != len(first) {
		t.Errorf("a large-enough buffer was not reused")
	}
	h, payload, _ := received(t, second)
	idx, rest, err := splitIndices(h, payload)
	if err != nil || h.BatchID != 2 || !reflect.DeepEqual(idx, []int64{1}) || h.Len != uint64(len(second)-wire.HeaderSize) {
		t.Fatalf("rebuilt frame: %+v %v %v", h, idx, err)
	}
	if got, err := wire.DecodeItemsOwned[[]float64](rest, 1); err != nil || got[0][0] != 5 {
		t.Fatalf("rebuilt frame decodes to %v, %v", got, err)
	}
	// A bigger frame outgrows the buffer: new memory, a correct frame.
	third, err := wholeResult(second, 3, []int64{2, 3}, [][]float64{v, v})
	if err != nil {
		t.Fatal(err)
	}
	if &third[0] == &second[0] {
		t.Errorf("a frame larger than its buffer's capacity shares its memory")
	}
	h, payload, _ = received(t, third)
	if idx, rest, err = splitIndices(h, payload); err != nil || !reflect.DeepEqual(idx, []int64{2, 3}) {
		t.Fatalf("outgrown frame: %v %v", idx, err)
	}
	if got, err := wire.DecodeItemsOwned[[]float64](rest, 2); err != nil || !reflect.DeepEqual(got, [][]float64{v, v}) {
		t.Fatalf("outgrown frame decodes to %v", err)
	}
	// TASK frames too.
	task, err := taskFrame(third, 4, 10, []string{"a", "b"})
	if err != nil || &task[0] != &third[0] {
		t.Fatalf("TASK into a large buffer: %v, reused %v", err, err == nil && &task[0] == &third[0])
	}
	h, payload, _ = received(t, task)
	idx, rest, err = splitIndices(h, payload)
	if err != nil || h.Kind != wire.KindTask || !reflect.DeepEqual(idx, []int64{10, 11}) {
		t.Fatalf("TASK %+v %v %v", h, idx, err)
	}
	if items, err := wire.DecodeItemsOwned[string](rest, 2); err != nil || !reflect.DeepEqual(items, []string{"a", "b"}) {
		t.Fatalf("TASK items %v %v", items, err)
	}
}

func TestFrameIntoFailureSendsNothing(t *testing.T) {
	dst := make([]byte, 0, 256)
	if buf, err := taskFrame(dst, 1, 0, []chan int{make(chan int)}); buf != nil || !errors.Is(err, &wire.Error{Kind: wire.ErrEncode}) {
		t.Errorf("unencodable TASK = %d bytes, %v", len(buf), err)
	}
	if buf, err := wholeResult(dst, 1, []int64{0}, []func(){func() {}}); buf != nil || !errors.Is(err, &wire.Error{Kind: wire.ErrEncode}) {
		t.Errorf("unencodable RESULT = %d bytes, %v", len(buf), err)
	}
}
