//go:build mpirt || mpicgo

package wire

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func FuzzParseHeader(f *testing.F) {
	b := make([]byte, HeaderSize)
	Header{Version: Version, Kind: KindResult, Count: 2, BatchID: 5, Len: 9}.Put(b)
	f.Add(b)
	f.Add(b[:10])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// A parsed header re-encodes to the same bytes.
		out := make([]byte, HeaderSize)
		h.Put(out)
		if string(out) != string(data[:HeaderSize]) {
			t.Fatalf("header %+v re-encodes to % x, input % x", h, out, data[:HeaderSize])
		}
	})
}

type fuzzItem struct {
	A string
	B []float64
	C Bulk[int32]
	D map[string]uint8
}

func fuzzDecode(t *testing.T, data []byte, count int) {
	check := func(err error) {
		if err == nil {
			return
		}
		var we *Error
		if !errors.As(err, &we) {
			t.Fatalf("untyped error %v", err)
		}
	}
	_, err := DecodeItems[fuzzItem](data, count)
	check(err)
	_, err = DecodeItems[[]float64](data, count)
	check(err)
	_, err = DecodeItems[string](data, count)
	check(err)
	_, err = DecodeValue[[]byte](data)
	check(err)
	_, err = DecodeValue[map[string]any](data)
	check(err)
}

func FuzzDecodeItems(f *testing.F) {
	seed, _ := EncodeItems(nil, []fuzzItem{{A: "x", B: []float64{1}, C: Bulk[int32]{2}, D: map[string]uint8{"k": 1}}, {}})
	f.Add(seed, 2)
	f.Add(seed[:len(seed)/2], 2)
	fl, _ := EncodeItems(nil, [][]float64{{1, 2}, nil})
	f.Add(fl, 2)
	f.Add([]byte{codeBin32, 0xff, 0xff, 0xff, 0xff}, 1)
	f.Add([]byte{0xdd, 0x7f, 0xff, 0xff, 0xff}, 1) // array32 with a forged length
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, data []byte, count int) {
		fuzzDecode(t, data, count%8)
	})
}

func FuzzJoinValue(f *testing.F) {
	head, body, _ := SplitValue(nil, []float64{1, 2})
	f.Add(head, body)
	f.Add([]byte{codeBin32, 0, 0, 0, 16}, make([]byte, 16))
	f.Add([]byte{0xa1, 'x'}, []byte{})
	f.Fuzz(func(t *testing.T, head, body []byte) {
		v, buf := BodyBuffer[[]float64](len(body))
		copy(buf, body)
		if _, err := JoinValue(head, v, buf); err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %v", err)
			}
		}
		s, sbuf := BodyBuffer[fuzzItem](len(body))
		copy(sbuf, body)
		if _, err := JoinValue(head, s, sbuf); err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}

// fuzzValue exercises the msgpack paths a value decode takes: nested
// structs and pointers, arrays, maps with integer keys, Bulk, times and
// every number size.
type fuzzValue struct {
	Item  *fuzzItem
	Arr   [2]int16
	When  time.Time
	Index map[int64][]string
	U     uint64
	F     float32
	Cplx  Bulk[complex64]
	Raw   [][]byte
}

// sameBits reports whether a and b are equal with floats compared bit for
// bit (so NaNs with equal payloads are equal) and times compared as
// instants with the same Zone() and Location().String() (a decoded
// time has a location of the decoder's: == would compare pointers).
func sameBits(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		return sameTime(a.Interface().(time.Time), b.Interface().(time.Time))
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float()) ||
			a.Kind() == reflect.Float32 && math.Float32bits(float32(a.Float())) == math.Float32bits(float32(b.Float()))
	case reflect.Complex64, reflect.Complex128:
		x, y := a.Complex(), b.Complex()
		return sameBits(reflect.ValueOf(real(x)), reflect.ValueOf(real(y))) && sameBits(reflect.ValueOf(imag(x)), reflect.ValueOf(imag(y)))
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameBits(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return false
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !sameBits(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() || !sameBits(a.MapIndex(k), bv) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !sameBits(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// checkValue decodes data as one T, by copy and by aliasing, and checks
// that both agree, that every error is a typed *Error, and that a decoded
// value re-encodes to a payload that decodes to the same value.
func checkValue[T any](t *testing.T, data []byte, shift int) {
	t.Helper()
	v, err := DecodeValue[T](data)
	buf := make([]byte, shift&7+len(data))
	own := buf[shift&7:]
	copy(own, data)
	vo, oerr := DecodeValueOwned[T](own)
	var we, oe *Error
	if err != nil && !errors.As(err, &we) || oerr != nil && !errors.As(oerr, &oe) {
		t.Fatalf("%T: untyped error %v / %v", v, err, oerr)
	}
	if (err == nil) != (oerr == nil) || err != nil && we.Kind != oe.Kind {
		t.Fatalf("%T: DecodeValue: %v; DecodeValueOwned: %v", v, err, oerr)
	}
	if err != nil {
		return
	}
	if !sameBits(reflect.ValueOf(&v).Elem(), reflect.ValueOf(&vo).Elem()) {
		t.Fatalf("%T: DecodeValue %#v, DecodeValueOwned %#v", v, v, vo)
	}
	again, err := EncodeValue(nil, v)
	if err != nil {
		t.Fatalf("%T: decoded %#v does not re-encode: %v", v, v, err)
	}
	v2, err := DecodeValue[T](again)
	if err != nil || !sameBits(reflect.ValueOf(&v).Elem(), reflect.ValueOf(&v2).Elem()) {
		t.Fatalf("%T: %#v re-encodes to % x, which decodes to %#v, %v", v, v, again, v2, err)
	}
}

// FuzzDecodeValue: value decoding of arbitrary bytes never panics, fails
// only with typed errors, agrees between the copying and the aliasing
// decoder, and whatever it accepts survives a second round trip.
func FuzzDecodeValue(f *testing.F) {
	item := fuzzItem{A: "x", B: []float64{1, math.NaN()}, C: Bulk[int32]{2}, D: map[string]uint8{"k": 1}}
	v := fuzzValue{Item: &item, Arr: [2]int16{-1, 2}, When: time.Unix(1e9, 5), Index: map[int64][]string{-3: {"a"}, 4: nil},
		U: math.MaxUint64, F: -0.5, Cplx: Bulk[complex64]{1 + 2i}, Raw: [][]byte{{1}, nil, {}}}
	for _, seed := range []any{v, fuzzValue{}, item, []string{"a", ""}, time.Unix(-5, 7), "héllo"} {
		b, err := EncodeValue(nil, seed)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0)
	}
	// Zoned times (the codec's own time encoding), alone and in a field,
	// and damaged ones.
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("UTC+5:30", 19800), time.FixedZone("", -3600)}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zones = append(zones, ny)
	}
	for i, z := range zones {
		tm := time.Date(2024, 3, 10, 6, 30+i*20, 0, i, time.UTC).In(z)
		for _, b := range [][]byte{must(EncodeValue(nil, tm)), must(EncodeValue(nil, fuzzValue{When: tm}))} {
			f.Add(b, i)
		}
	}
	f.Add(zonedPayload(formZone, 1e9, 5, 19800, "IST", "Asia/Kolkata"), 0)
	f.Add(zonedPayload(formLocal, -1, 999999999, -18000, "EST", ""), 0)
	f.Add(zonedPayload(formZone, 1e9, 1e9, 1<<40, "x", "Nowhere/Zone"), 0)
	f.Add(zonedPayload(formUTC, 0, 0, 0, "", "")[:8], 0)
	f.Add([]byte{0xc7, 0x0c, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 1) // time ext with a zero payload
	f.Add([]byte{0x81, 0xa4, 'W', 'h', 'e', 'n', 0xa4, 'j', 'u', 'n', 'k'}, 3)
	f.Fuzz(func(t *testing.T, data []byte, shift int) {
		checkValue[fuzzValue](t, data, shift)
		checkValue[fuzzItem](t, data, shift)
		checkValue[time.Time](t, data, shift)
		checkValue[map[int64][]string](t, data, shift)
		checkValue[string](t, data, shift)
		checkValue[[2]uint8](t, data, shift)
	})
}

// FuzzDecodeBulk: the two bulk decoders (a top-level numeric slice read
// straight from a bin value, and a Bulk decoded through msgpack) never
// panic, fail only with typed errors (or msgpack's, for Bulk), and agree:
// whatever the top-level path accepts, Bulk accepts with the same
// elements, and the aliasing decoder returns the same elements too.
func FuzzDecodeBulk(f *testing.F) {
	seed := func(b []byte, err error) {
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0)
	}
	seed(EncodeValue(nil, []int16{-1, 2, 3}))
	seed(EncodeValue(nil, []float64{math.Inf(1)}))
	seed(EncodeValue(nil, []complex64{1i}))
	seed(EncodeValue(nil, []byte("raw")))
	seed(EncodeValue(nil, []uint32(nil)))
	seed(EncodeValue(nil, []float32{}))
	f.Add([]byte{codeBin16, 0, 3, 1, 2, 3}, 1)
	f.Add([]byte{codeBin32, 0, 0, 0, 4, 1, 2, 3, 4}, 2)
	f.Add([]byte{0xa2, 'h', 'i'}, 0) // str: accepted by msgpack's bytes decoder only
	f.Fuzz(func(t *testing.T, data []byte, shift int) {
		checkBulk[int16](t, data, shift)
		checkBulk[uint8](t, data, shift)
		checkBulk[float64](t, data, shift)
		checkBulk[complex64](t, data, shift)
		checkBulk[int](t, data, shift)
	})
}

func checkBulk[E Number](t *testing.T, data []byte, shift int) {
	t.Helper()
	checkValue[[]E](t, data, shift)
	s, err := DecodeValue[[]E](data)
	var b Bulk[E]
	berr := msgpack.Unmarshal(data, &b)
	if err != nil {
		var we *Error
		if !errors.As(err, &we) {
			t.Fatalf("[]%T: untyped error %v", *new(E), err)
		}
		return
	}
	if berr != nil {
		t.Fatalf("[]%T decodes to %v, but Bulk fails: %v", *new(E), s, berr)
	}
	if !sameBits(reflect.ValueOf([]E(b)), reflect.ValueOf(s)) {
		t.Fatalf("[]%T = %v, Bulk = %v", *new(E), s, b)
	}
	_, _ = DecodeValue[Bulk[E]](data) // the custom path inside the codec: typed error or value
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
