//go:build mpirt || mpicgo

package wire

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"
)

// fillSegments rebuilds the whole payload from a segmented one: each
// segment's data inserted at its offset (relative to head's start).
func fillSegments(head []byte, segs []Segment) []byte {
	var out []byte
	prev := 0
	for _, sg := range segs {
		out = append(out, head[prev:sg.Off]...)
		out = append(out, sg.Data...)
		prev = sg.Off
	}
	return append(out, head[prev:]...)
}

func TestSegmentedTopLevelRoundTrip(t *testing.T) {
	big := make([]float64, 9000) // 72000 bytes: a segment at segMin 32 KiB
	for i := range big {
		big[i] = float64(i) * 1.5
	}
	odd := make([]float64, 4097) // 32776 bytes: just over
	odd[4096] = -3
	items := [][]float64{big, {1, 2}, nil, {}, odd}
	whole, err := EncodeItems(nil, items)
	if err != nil {
		t.Fatal(err)
	}
	prefix := []byte("PFX")
	head, segs, err := EncodeItemsSegmented(append([]byte(nil), prefix...), items, 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 2 || unsafe.Pointer(&segs[0].Data[0]) != unsafe.Pointer(&big[0]) || unsafe.Pointer(&segs[1].Data[0]) != unsafe.Pointer(&odd[0]) {
		t.Fatalf("segments %d, want 2 aliasing the values", len(segs))
	}
	if got := fillSegments(head[len(prefix):], rebase(segs, -len(prefix))); !bytes.Equal(got, whole) {
		t.Fatal("segmented payload with its segments filled in differs from EncodeItems'")
	}
	// Received apart: each segment in a buffer of its own, which the
	// value aliases.
	var recv []Segment
	for _, sg := range rebase(segs, -len(prefix)) {
		recv = append(recv, Segment{Off: sg.Off, Data: append(make([]byte, 0, len(sg.Data)), sg.Data...)})
	}
	got, err := DecodeItemsSegments[[]float64](head[len(prefix):], len(items), recv)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, items) {
		t.Fatal("round trip differs")
	}
	if !inside(got[0], recv[0].Data) || !inside(got[4], recv[1].Data) {
		t.Fatal("values do not alias their segments")
	}
	// A segment of the wrong size, or one left over, is a wire error.
	bad := append([]Segment(nil), recv...)
	bad[1].Data = bad[1].Data[:len(bad[1].Data)-8]
	if _, err := DecodeItemsSegments[[]float64](head[len(prefix):], len(items), bad); err == nil {
		t.Fatal("short segment accepted")
	}
	extra := append(append([]Segment(nil), recv...), Segment{Off: len(head) - len(prefix), Data: []byte{1}})
	if _, err := DecodeItemsSegments[[]float64](head[len(prefix):], len(items), extra); err == nil {
		t.Fatal("left-over segment accepted")
	}
}

func TestSegmentedNestedBulkRoundTrip(t *testing.T) {
	c := make(Bulk[int32], 20001) // 80004 bytes
	for i := range c {
		c[i] = int32(i) - 7
	}
	items := []fuzzItem{{A: "a", B: []float64{1}, C: c, D: map[string]uint8{"k": 1}}, {A: "b", C: Bulk[int32]{5}}}
	whole, err := EncodeItems(nil, items)
	if err != nil {
		t.Fatal(err)
	}
	head, segs, err := EncodeItemsSegmented(nil, items, 32<<10)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 1 || len(segs[0].Data) != 4*len(c) {
		t.Fatalf("%d segments, want the one large Bulk", len(segs))
	}
	full := fillSegments(head, segs)
	if !bytes.Equal(full, whole) {
		t.Fatal("nested: filled-in payload differs")
	}
	got, err := DecodeItemsOwned[fuzzItem](full, len(items))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, items) {
		t.Fatal("nested round trip differs")
	}
	if BulkPath[fuzzItem]() || !BulkPath[[]float64]() || !BulkPath[[]byte]() {
		t.Fatal("BulkPath")
	}
	if _, err := DecodeItemsSegments[fuzzItem](head, len(items), segs); err == nil {
		t.Fatal("segments for a type off the bulk path accepted")
	}
}

func TestDecodeBulkOwnedAliases(t *testing.T) {
	c := make(Bulk[int64], 1000)
	c[999] = 42
	v := struct{ C Bulk[int64] }{c}
	payload, err := EncodeValue(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	// Find a placement that aligns the data, then check both decodes.
	for pad := range 8 {
		buf := make([]byte, pad+len(payload))[pad:]
		copy(buf, payload)
		owned, err := DecodeValueOwned[struct{ C Bulk[int64] }](buf)
		if err != nil || !reflect.DeepEqual(owned, v) {
			t.Fatalf("owned decode: %v", err)
		}
		copied, err := DecodeValue[struct{ C Bulk[int64] }](buf)
		if err != nil || !reflect.DeepEqual(copied, v) || inside(copied.C, buf) {
			t.Fatalf("copying decode aliases or fails: %v", err)
		}
		if inside(owned.C, buf) {
			return // aliased where aligned
		}
	}
	t.Fatal("an owned nested Bulk never aliased its payload")
}

func rebase(segs []Segment, d int) []Segment {
	out := make([]Segment, len(segs))
	for i, s := range segs {
		out[i] = Segment{Off: s.Off + d, Data: s.Data}
	}
	return out
}
