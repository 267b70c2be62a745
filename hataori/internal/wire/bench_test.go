//go:build mpirt || mpicgo

package wire

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

const benchN = 1 << 17 // 1 MiB of float64

func benchData() []float64 {
	v := make([]float64, benchN)
	for i := range v {
		v[i] = float64(i) * 0.5
	}
	return v
}

// BenchmarkBulkFloat64 is encode+decode of 1 MiB []float64 through the wire
// codec (bulk path).
func BenchmarkBulkFloat64(b *testing.B) {
	v := benchData()
	b.SetBytes(benchN * 8)
	buf := make([]byte, 0, benchN*8+16)
	for b.Loop() {
		p, err := EncodeValue(buf[:0], v)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeValue[[]float64](p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawCopy is the baseline: two copies of the same bytes (what the
// bulk path does: one into the frame, one out of it).
func BenchmarkRawCopy(b *testing.B) {
	v := benchData()
	b.SetBytes(benchN * 8)
	dst := make([]float64, benchN)
	mid := make([]float64, benchN)
	for b.Loop() {
		copy(mid, v)
		copy(dst, mid)
	}
}

// BenchmarkMsgpackFloat64 is plain msgpack element-by-element encoding of
// the same slice, for comparison.
func BenchmarkMsgpackFloat64(b *testing.B) {
	v := benchData()
	b.SetBytes(benchN * 8)
	for b.Loop() {
		p, err := msgpack.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		var out []float64
		if err := msgpack.Unmarshal(p, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNestedBulk is encode+decode of a struct holding a 1 MiB Bulk field.
func BenchmarkNestedBulk(b *testing.B) {
	v := fuzzItem{A: "x", C: make(Bulk[int32], benchN*2)}
	b.SetBytes(benchN * 8)
	for b.Loop() {
		p, err := EncodeValue(nil, v)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeValue[fuzzItem](p); err != nil {
			b.Fatal(err)
		}
	}
}
