//go:build mpirt || mpicgo

package wire

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"unsafe"
)

// inside reports whether v's data lies in buf's memory.
func inside[E any](v []E, buf []byte) bool {
	if len(v) == 0 || len(buf) == 0 {
		return false
	}
	p, b := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&buf[0]))
	return p >= b && p < b+uintptr(len(buf))
}

// placed copies payload into a new buffer at the offset AlignPad asks for
// (behind off bytes of frame prefix) and returns the payload's copy.
func placed(payload []byte, off int) []byte {
	pad := AlignPad(off, len(payload))
	buf := make([]byte, pad+off+len(payload))
	copy(buf[pad+off:], payload)
	return buf[pad+off:]
}

func TestDecodeItemsOwnedAliasesAlignedValues(t *testing.T) {
	a := make([]float64, 5000)
	a[4999] = 7
	b := []float64{1, 2, 3} // follows a's 5-byte bin32 header and 40000 bytes: misaligned
	items := [][]float64{a, b, nil, {}}
	payload, err := EncodeItems(nil, items)
	if err != nil {
		t.Fatal(err)
	}
	p := placed(payload, HeaderSize)
	got, err := DecodeItemsOwned[[]float64](p, len(items))
	if err != nil || !reflect.DeepEqual(got, items) {
		t.Fatalf("DecodeItemsOwned = %v, %v", err, got)
	}
	if !inside(got[0], p) {
		t.Errorf("the aligned first value was copied")
	}
	if inside(got[1], p) {
		t.Errorf("a misaligned value aliases the payload")
	}
	if got[2] != nil || got[3] == nil {
		t.Errorf("nil and empty not kept apart: %#v %#v", got[2], got[3])
	}
	if cap(got[0]) != len(got[0]) {
		t.Errorf("an aliased value has capacity %d > length %d: appending would overwrite the next value", cap(got[0]), len(got[0]))
	}
	// The plain variant never aliases.
	plain, err := DecodeItems[[]float64](p, len(items))
	if err != nil || inside(plain[0], p) {
		t.Errorf("DecodeItems aliased its payload (err %v)", err)
	}
	// Bytes alias at any alignment.
	bs, _ := EncodeItems(nil, [][]byte{[]byte("abc"), []byte("de")})
	gb, err := DecodeItemsOwned[[]byte](bs, 2)
	if err != nil || !inside(gb[1], bs) || string(gb[0])+string(gb[1]) != "abcde" {
		t.Errorf("[]byte items: %q %v", gb, err)
	}
}

func TestDecodeItemsOwnedErrors(t *testing.T) {
	payload, _ := EncodeItems(nil, [][]float64{{1, 2}, {3}})
	cases := []struct {
		name  string
		p     []byte
		count int
		kind  ErrorKind
	}{
		{"trailing", payload, 1, ErrTrailing},
		{"truncated", payload[:len(payload)-1], 2, ErrTruncated},
		{"count", payload, len(payload) + 1, ErrCount},
		{"negative", payload, -1, ErrCount},
		{"not a bin", []byte{0x93, 1, 2, 3}, 1, ErrDecode},
	}
	for _, c := range cases {
		if _, err := DecodeItemsOwned[[]float64](c.p, c.count); !isKind(err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
		}
	}
	// Non-bulk types decode as with DecodeItems.
	sp, _ := EncodeItems(nil, []string{"x", "yz"})
	if got, err := DecodeItemsOwned[string](sp, 2); err != nil || !reflect.DeepEqual(got, []string{"x", "yz"}) {
		t.Errorf("strings: %v %v", got, err)
	}
}

func TestEncodeItemsAllocatesOnceForBulkBatches(t *testing.T) {
	batch := func(n int) [][]float64 {
		items := make([][]float64, n)
		for i := range items {
			items[i] = make([]float64, 8192) // 64 KiB each
			items[i][0] = float64(i)
		}
		return items
	}
	allocs := func(items [][]float64) float64 {
		return testing.AllocsPerRun(10, func() {
			if _, err := EncodeItems(nil, items); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Growing the payload once per value would cost 15 more allocations
	// for 16 values than for one (the margin absorbs a stray runtime
	// allocation).
	if one, sixteen := allocs(batch(1)), allocs(batch(16)); sixteen > one+2 {
		t.Errorf("encoding 16 bulk values allocates %v times, one value %v times", sixteen, one)
	}
	items := batch(16)
	dst, err := EncodeItems(nil, items)
	if err != nil {
		t.Fatal(err)
	}
	if cap(dst) != len(dst) {
		t.Errorf("payload of %d bytes has capacity %d: not sized exactly", len(dst), cap(dst))
	}
	if got, err := DecodeItems[[]float64](dst, len(items)); err != nil || !reflect.DeepEqual(got, items) {
		t.Errorf("round trip: %v", err)
	}
}

func TestEncodeItemsOversizedBulkBatch(t *testing.T) {
	old := MaxBytes
	MaxBytes = HeaderSize + 100
	defer func() { MaxBytes = old }()
	items := [][]byte{make([]byte, 60), make([]byte, 60)} // 62 + 62 > 100
	if n := bulkItemsLen(items, shapeOf(reflect.TypeFor[[]byte]())); n != 0 {
		t.Errorf("bulkItemsLen over the limit = %d, want 0", n)
	}
	dst := make([]byte, 3, 8)
	out, err := EncodeItems(dst, items)
	if !isKind(err, ErrLength) || len(out) != 3 || &out[0] != &dst[0] {
		t.Errorf("EncodeItems = %d bytes, %v; want dst back and ErrLength", len(out), err)
	}
	if n := bulkItemsLen([][]byte{nil, make([]byte, 10)}, shapeOf(reflect.TypeFor[[]byte]())); n != 1+2+10 {
		t.Errorf("bulkItemsLen = %d, want 13", n)
	}
}

// FuzzDecodeItemsOwned checks that the aliasing decoder accepts and rejects
// exactly what DecodeItems does, with the same values and error kinds.
func FuzzDecodeItemsOwned(f *testing.F) {
	p, _ := EncodeItems(nil, [][]float64{{1, 2}, nil, {}, make([]float64, 40)})
	f.Add(p, 4, 0)
	f.Add(p, 3, 3)
	f.Add(p[:len(p)-3], 4, 1)
	b, _ := EncodeItems(nil, [][]byte{[]byte("xy"), nil})
	f.Add(b, 2, 5)
	f.Fuzz(func(t *testing.T, data []byte, count, shift int) {
		if count > 1<<16 {
			return
		}
		// Place the data at every alignment, so some values alias.
		buf := make([]byte, shift&7+len(data))
		p := buf[shift&7:]
		copy(p, data)
		want, werr := DecodeItems[[]float64](data, count)
		got, gerr := DecodeItemsOwned[[]float64](p, count)
		var wk, gk ErrorKind
		var we, ge *Error
		if errors.As(werr, &we) {
			wk = we.Kind
		}
		if errors.As(gerr, &ge) {
			gk = ge.Kind
		}
		if (werr == nil) != (gerr == nil) || wk != gk {
			t.Fatalf("DecodeItems: %v; DecodeItemsOwned: %v", werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(floatBits(want), floatBits(got)) {
			t.Fatalf("values differ: %v vs %v", want, got)
		}
		bw, bwerr := DecodeItems[[]byte](data, count)
		bg, bgerr := DecodeItemsOwned[[]byte](p, count)
		if (bwerr == nil) != (bgerr == nil) || (bwerr == nil && !reflect.DeepEqual(bw, bg)) {
			t.Fatalf("[]byte: %v %v vs %v %v", bw, bwerr, bg, bgerr)
		}
	})
}

// floatBits maps values to their bit patterns, so NaNs compare equal.
func floatBits(vs [][]float64) [][]uint64 {
	out := make([][]uint64, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = make([]uint64, len(v))
			for j, x := range v {
				out[i][j] = math.Float64bits(x)
			}
		}
	}
	return out
}
