//go:build mpirt || mpicgo

package wire

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// scalarSamples are values of every encoded width and sign, edges included.
func scalarSamples(rng *rand.Rand) []int64 {
	out := []int64{0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, math.MaxInt32, math.MaxInt32 + 1,
		math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64, -1, -31, -32, -33, -127, -128, -129,
		math.MinInt16, math.MinInt16 - 1, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	for range 200 {
		out = append(out, int64(rng.Uint64())>>rng.IntN(64))
	}
	return out
}

// libraryEncode is the payload the msgpack library writes for vs, each
// value through Encoder.Encode as the general path does.
func libraryEncode[T any](t *testing.T, vs []T) []byte {
	t.Helper()
	var w appendWriter
	enc := newEncoder(&w)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	return w.b
}

// libraryDecode decodes count values of p through the library (the
// general path with the hand-written one skipped).
func libraryDecode[T any](p []byte, count int) ([]T, error) {
	if err := validate(p, count); err != nil {
		return nil, err
	}
	dec := msgpack.NewDecoder(newPayloadReader(p))
	out := make([]T, count)
	for i := range out {
		if err := decodeMsgpack(dec, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func checkScalarKind[T any](t *testing.T, vs []T) {
	t.Helper()
	if scalarOf[T]() == scalarNone {
		t.Fatalf("%s takes no hand-written path", typeName[T]())
	}
	got, err := EncodeItems(nil, vs)
	if err != nil {
		t.Fatal(err)
	}
	if want := libraryEncode(t, vs); !bytes.Equal(got, want) {
		t.Fatalf("%s: EncodeItems wrote %x, the library %x", typeName[T](), got, want)
	}
	back, err := DecodeItemsOwned[T](got, len(vs))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, vs) && !(len(vs) == 0 && len(back) == 0) {
		t.Fatalf("%s: decoded %v, want %v", typeName[T](), back, vs)
	}
}

// TestScalarPathMatchesLibrary checks that the hand-written path for int,
// int64, uint, uint64 and float64 writes the library's bytes and reads
// them back.
func TestScalarPathMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ints := scalarSamples(rng)
	var (
		is   []int
		i64s = ints
		us   []uint
		u64s []uint64
		fs   = []float64{0, math.Copysign(0, -1), 1.5, -2.25, math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	)
	for _, n := range ints {
		is, us, u64s = append(is, int(n)), append(us, uint(n)), append(u64s, uint64(n))
		fs = append(fs, float64(n)/3)
	}
	checkScalarKind(t, is)
	checkScalarKind(t, i64s)
	checkScalarKind(t, us)
	checkScalarKind(t, u64s)
	checkScalarKind(t, fs)
	checkScalarKind(t, []uint64{})
	got, err := EncodeItems(nil, []float64{math.NaN()})
	if err != nil {
		t.Fatal(err)
	}
	if want := libraryEncode(t, []float64{math.NaN()}); !bytes.Equal(got, want) {
		t.Fatalf("NaN: %x, the library %x", got, want)
	}
}

// TestScalarPathOnlyExactTypes checks that a type defined on a builtin
// one (which may have coding methods) and other types take the library's
// path.
func TestScalarPathOnlyExactTypes(t *testing.T) {
	type myInt int
	for name, k := range map[string]scalarKind{
		"myInt": scalarOf[myInt](), "int32": scalarOf[int32](), "float32": scalarOf[float32](),
		"[3]uint64": scalarOf[[3]uint64](), "string": scalarOf[string](), "*int": scalarOf[*int](),
	} {
		if k != scalarNone {
			t.Errorf("%s takes the hand-written path (kind %d)", name, k)
		}
	}
}

// decodeBoth decodes p as count values of T through DecodeItems and
// through the library alone and fails unless both agree: the same values,
// or errors of the same kind and item.
func decodeBoth[T any](t *testing.T, p []byte, count int) {
	t.Helper()
	got, gerr := DecodeItemsOwned[T](p, count)
	want, werr := libraryDecode[T](p, count)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%s from %x (count %d): DecodeItems error %v, library error %v", typeName[T](), p, count, gerr, werr)
	}
	if gerr != nil {
		var ge *Error
		if !errors.As(gerr, &ge) {
			t.Fatalf("%s from %x: error %v is no *Error", typeName[T](), p, gerr)
		}
		return
	}
	for i := range want {
		gb := reflect.ValueOf(got[i]).Interface()
		wb := reflect.ValueOf(want[i]).Interface()
		if f, ok := gb.(float64); ok && math.IsNaN(f) && math.IsNaN(wb.(float64)) {
			continue
		}
		if gb != wb {
			t.Fatalf("%s from %x: item %d decoded %v, the library %v", typeName[T](), p, i, gb, wb)
		}
	}
}

// decodeEveryKind is decodeBoth for each type with the hand-written path.
func decodeEveryKind(t *testing.T, p []byte, count int) {
	t.Helper()
	decodeBoth[int](t, p, count)
	decodeBoth[int64](t, p, count)
	decodeBoth[uint](t, p, count)
	decodeBoth[uint64](t, p, count)
	decodeBoth[float64](t, p, count)
}

// TestScalarDecodeAsLibrary decodes payloads of every integer and float
// code, nil, other types, truncated and overlong ones into each kind, and
// checks that the result is the library's: the codes the library converts
// (a signed code into uint64, an integer into float64, nil as zero) the
// same way, and everything it refuses refused.
func TestScalarDecodeAsLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var payloads [][]byte
	var w appendWriter
	enc := newEncoder(&w)
	add := func(v any) {
		w.b = nil
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, append([]byte(nil), w.b...))
	}
	for _, n := range scalarSamples(rng) {
		add(n)
		add(uint64(n))
		add(int8(n))
		add(int16(n))
		add(int32(n))
		add(uint8(n))
		add(uint16(n))
		add(uint32(n))
		add(float32(n) / 7)
		add(float64(n) / 7)
	}
	add(nil)
	add("x")
	add(true)
	add([]int{1})
	for _, p := range payloads {
		for _, q := range [][]byte{p, p[:len(p)-1], append(append([]byte(nil), p...), p...)} {
			for _, count := range []int{1, 2} {
				if count > len(q) {
					continue
				}
				decodeEveryKind(t, q, count)
			}
		}
	}
	// Every single byte as a code, with 8 bytes after it.
	for c := range 256 {
		p := []byte{byte(c), 1, 2, 3, 4, 5, 6, 7, 8}
		for n := 1; n <= len(p); n++ {
			decodeEveryKind(t, p[:n], 1)
		}
	}
}

// TestScalarItemsAllocateOnce checks that encoding a batch of uint64 into
// a buffer with room allocates nothing and decoding it allocates only the
// result slice.
func TestScalarItemsAllocateOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	vs := make([]uint64, 1000)
	for i := range vs {
		vs[i] = uint64(i) * 1e12
	}
	buf := make([]byte, 0, 9*len(vs))
	if n := testing.AllocsPerRun(20, func() { _, _ = EncodeItems(buf[:0], vs) }); n > 1 {
		t.Errorf("EncodeItems of %d uint64: %v allocations, want at most 1 (the encoder)", len(vs), n)
	}
	p, _ := EncodeItems(nil, vs)
	if n := testing.AllocsPerRun(20, func() { _, _ = DecodeItemsOwned[uint64](p, len(vs)) }); n > 1 {
		t.Errorf("DecodeItems of %d uint64: %v allocations, want 1", len(vs), n)
	}
}

// BenchmarkScalarItems is encode+decode of a batch of 256 uint64 results.
func BenchmarkScalarItems(b *testing.B) {
	vs := make([]uint64, 256)
	for i := range vs {
		vs[i] = uint64(i) << 40
	}
	buf := make([]byte, 0, 9*len(vs))
	for b.Loop() {
		p, err := EncodeItems(buf[:0], vs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeItemsOwned[uint64](p, len(vs)); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzScalarDecode decodes arbitrary payloads into each kind with the
// hand-written path and with the library alone: they must agree.
func FuzzScalarDecode(f *testing.F) {
	for _, p := range [][]byte{{0x05}, {0xcf, 1, 2, 3, 4, 5, 6, 7, 8}, {0xd0, 0x80}, {0xca, 0x3f, 0x80, 0, 0}, {0xc0}, {0xa1, 'x'}} {
		f.Add(p, uint8(1))
	}
	f.Fuzz(func(t *testing.T, p []byte, count uint8) {
		n := int(count%4) + 1
		if n > len(p) {
			return
		}
		decodeEveryKind(t, p, n)
	})
}
