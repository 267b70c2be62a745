//go:build mpirt || mpicgo

package hataori

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

type bulkSample struct {
	Name   string
	Values Bulk[float64]
	Cplx   Bulk[complex128]
	Empty  Bulk[int16]
	None   Bulk[uint8]
}

// TestBulkCrossesAsOneBin: a Bulk field inside a struct passes the wire
// type check (complex numbers included, which element by element it would
// not) and travels as one msgpack bin of its little-endian bytes; nil and
// empty stay distinct; the value comes back equal.
func TestBulkCrossesAsOneBin(t *testing.T) {
	if err := checkWireType[bulkSample](); err != nil {
		t.Fatalf("type check refuses a struct of Bulk fields: %v", err)
	}
	if err := checkWireType[struct{ C []complex128 }](); err == nil {
		t.Fatal("type check accepts a plain []complex128 field: the Bulk acceptance above proves nothing")
	}
	v := bulkSample{Name: "s", Values: Bulk[float64]{1.5, math.Inf(-1)}, Cplx: Bulk[complex128]{1 + 2i}, Empty: Bulk[int16]{}}
	p, err := wire.EncodeValue(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0xc4, 16}
	want = binary.LittleEndian.AppendUint64(want, math.Float64bits(1.5))
	want = binary.LittleEndian.AppendUint64(want, math.Float64bits(math.Inf(-1)))
	if !bytes.Contains(p, want) {
		t.Errorf("payload % x does not hold Values as one bin % x", p, want)
	}
	wantC := []byte{0xc4, 16}
	wantC = binary.LittleEndian.AppendUint64(wantC, math.Float64bits(1))
	wantC = binary.LittleEndian.AppendUint64(wantC, math.Float64bits(2))
	if !bytes.Contains(p, wantC) {
		t.Errorf("payload % x does not hold Cplx as one bin % x", p, wantC)
	}
	back, err := wire.DecodeValue[bulkSample](p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Errorf("round trip: %#v, want %#v", back, v)
	}
	if back.Empty == nil || back.None != nil {
		t.Errorf("nil and empty Bulk not kept apart: Empty %#v, None %#v", back.Empty, back.None)
	}
	// A top-level Bulk value round-trips too.
	top, err := wire.EncodeValue(nil, Bulk[int32]{7, -1})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := wire.DecodeValue[Bulk[int32]](top); err != nil || !reflect.DeepEqual(got, Bulk[int32]{7, -1}) {
		t.Errorf("top-level Bulk: %v, %v", got, err)
	}
}
