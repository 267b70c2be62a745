//go:build mpirt || mpicgo

package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

type inner struct {
	Name string
	Vals Bulk[float64]
	Raw  []int32
}

type outer struct {
	ID    int64
	Tags  map[string]int
	Inner inner
	Ptr   *inner
	Bytes []byte
}

type myFloats []float64

func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := EncodeValue(nil, v)
	if err != nil {
		t.Fatalf("EncodeValue(%T): %v", v, err)
	}
	got, err := DecodeValue[T](b)
	if err != nil {
		t.Fatalf("DecodeValue(%T): %v", v, err)
	}
	return got
}

func TestRoundTripValues(t *testing.T) {
	check := func(name string, want, got any) {
		t.Helper()
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: got %#v, want %#v", name, got, want)
		}
	}
	check("string", "héllo, 世界", roundTrip(t, "héllo, 世界"))
	check("empty string", "", roundTrip(t, ""))
	check("int", -42, roundTrip(t, -42))
	check("float64s", []float64{1.5, -2, math.Inf(1)}, roundTrip(t, []float64{1.5, -2, math.Inf(1)}))
	check("nil float64s", []float64(nil), roundTrip(t, []float64(nil)))
	check("empty float64s", []float64{}, roundTrip(t, []float64{}))
	check("bytes", []byte{0, 1, 255}, roundTrip(t, []byte{0, 1, 255}))
	check("int8s", []int8{-128, 127}, roundTrip(t, []int8{-128, 127}))
	check("uint16s", []uint16{1, 65535}, roundTrip(t, []uint16{1, 65535}))
	check("ints", []int{math.MinInt, math.MaxInt}, roundTrip(t, []int{math.MinInt, math.MaxInt}))
	check("complex128s", []complex128{1 + 2i}, roundTrip(t, []complex128{1 + 2i}))
	check("named", myFloats{3, 4}, roundTrip(t, myFloats{3, 4}))
	o := outer{ID: 7, Tags: map[string]int{"b": 2, "a": 1}, Inner: inner{Name: "x", Vals: Bulk[float64]{1, 2}, Raw: []int32{3}},
		Ptr: &inner{Name: "p"}, Bytes: []byte{}}
	check("nested struct", o, roundTrip(t, o))
	check("zero struct", outer{}, roundTrip(t, outer{}))
	check("nested slices", [][]float64{{1}, nil, {}}, roundTrip(t, [][]float64{{1}, nil, {}}))
}

func TestBulkFormat(t *testing.T) {
	// A top-level []float64 is one msgpack bin of its little-endian bytes,
	// so plain msgpack decodes it as []byte.
	b, err := EncodeValue(nil, []float64{1})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{codeBin8, 8, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoding % x, want % x", b, want)
	}
	// A nested Bulk field takes the same form.
	nb, err := msgpack.Marshal(Bulk[float64]{1})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(nb, want) {
		t.Fatalf("Bulk encoding % x, want % x", nb, want)
	}
	// Larger slices use bin16 and bin32 headers.
	for _, n := range []int{40, 9000} {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i)
		}
		if got := roundTrip(t, v); !reflect.DeepEqual(got, v) {
			t.Fatalf("n=%d: round trip differs", n)
		}
		bv := Bulk[float64](v)
		if got := roundTrip(t, bv); !reflect.DeepEqual(got, bv) {
			t.Fatalf("Bulk n=%d: round trip differs", n)
		}
	}
}

func TestItems(t *testing.T) {
	items := []string{"a", "", "ü"}
	b, err := EncodeItems([]byte("hdr"), items)
	if err != nil {
		t.Fatal(err)
	}
	if string(b[:3]) != "hdr" {
		t.Fatalf("prefix lost: %q", b[:3])
	}
	got, err := DecodeItems[string](b[3:], 3)
	if err != nil || !reflect.DeepEqual(got, items) {
		t.Fatalf("DecodeItems = %q, %v", got, err)
	}
	empty, err := DecodeItems[string](nil, 0)
	if err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("DecodeItems(nil, 0) = %#v, %v", empty, err)
	}
	fl := [][]float64{{1, 2}, nil, {3}}
	fb, err := EncodeItems(nil, fl)
	if err != nil {
		t.Fatal(err)
	}
	gf, err := DecodeItems[[]float64](fb, 3)
	if err != nil || !reflect.DeepEqual(gf, fl) {
		t.Fatalf("bulk items = %v, %v", gf, err)
	}
}

// failing fails to encode when Bad is set and to decode when Reject is set.
type failing struct {
	Bad    bool
	Reject bool
}

var errMarked = errors.New("marked value")

func (f failing) EncodeMsgpack(enc *msgpack.Encoder) error {
	if f.Bad {
		return errMarked
	}
	return enc.EncodeBool(f.Reject)
}

func (f *failing) DecodeMsgpack(dec *msgpack.Decoder) error {
	r, err := dec.DecodeBool()
	if err != nil {
		return err
	}
	if r {
		return errMarked
	}
	return nil
}

func isKind(err error, k ErrorKind) bool { return errors.Is(err, &Error{Kind: k}) }

func TestErrorKinds(t *testing.T) {
	f64, _ := EncodeValue(nil, []float64{1, 2})
	str, _ := EncodeValue(nil, "hello")
	two, _ := EncodeItems(nil, []int{1, 2})
	rejected, _ := EncodeValue(nil, failing{Reject: true})
	hdr := func(mut func(b []byte)) []byte {
		b := make([]byte, HeaderSize)
		Header{Version: Version, Kind: KindTask, Count: 1, BatchID: 9, Len: 5}.Put(b)
		mut(b)
		return b
	}
	parse := func(b []byte) error { _, err := ParseHeader(b); return err }
	cases := []struct {
		name string
		err  error
		kind ErrorKind
	}{
		{"header version", parse(hdr(func(b []byte) { b[0] = 9 })), ErrVersion},
		{"header kind zero", parse(hdr(func(b []byte) { b[1] = 0 })), ErrKind},
		{"header kind unknown", parse(hdr(func(b []byte) { b[1] = 200 })), ErrKind},
		{"header reserved", parse(hdr(func(b []byte) { b[3] = 1 })), ErrDecode},
		{"header short", parse(make([]byte, HeaderSize-1)), ErrTruncated},
		{"header length", parse(hdr(func(b []byte) { b[23] = 0x80 })), ErrLength},
		{"bulk truncated", func() error { _, err := DecodeValue[[]float64](f64[:len(f64)-1]); return err }(), ErrTruncated},
		{"bulk header truncated", func() error { _, err := DecodeValue[[]float64]([]byte{codeBin32, 0}); return err }(), ErrTruncated},
		{"bulk forged length", func() error { _, err := DecodeValue[[]byte]([]byte{codeBin32, 0x7f, 0xff, 0xff, 0xff, 1}); return err }(), ErrTruncated},
		{"bulk partial element", func() error { _, err := DecodeValue[[]float64]([]byte{codeBin8, 3, 1, 2, 3}); return err }(), ErrDecode},
		{"bulk wrong code", func() error { _, err := DecodeValue[[]float64](str); return err }(), ErrDecode},
		{"bulk trailing", func() error { _, err := DecodeValue[[]float64](append(f64, 0)); return err }(), ErrTrailing},
		{"msgpack truncated", func() error { _, err := DecodeValue[string](str[:3]); return err }(), ErrTruncated},
		{"msgpack empty", func() error { _, err := DecodeValue[string](nil); return err }(), ErrTruncated},
		{"msgpack type", func() error { _, err := DecodeValue[int](str); return err }(), ErrDecode},
		{"msgpack custom decode", func() error { _, err := DecodeValue[failing](rejected); return err }(), ErrDecode},
		{"msgpack trailing", func() error { _, err := DecodeValue[string](append(str, 0xc0)); return err }(), ErrTrailing},
		{"items trailing", func() error { _, err := DecodeItems[int](two, 1); return err }(), ErrTrailing},
		{"items truncated", func() error { _, err := DecodeItems[string](str, 2); return err }(), ErrTruncated},
		{"items count negative", func() error { _, err := DecodeItems[int](two, -1); return err }(), ErrCount},
		{"items count too large", func() error { _, err := DecodeItems[int](two, len(two)+1); return err }(), ErrCount},
		{"forged map length", func() error {
			_, err := DecodeValue[map[string]any]([]byte{0xdf, 0x7f, 0xff, 0xff, 0xff, 0xa0, 0xc0})
			return err
		}(), ErrTruncated},
		{"forged array length", func() error { _, err := DecodeValue[[]string]([]byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0xa0}); return err }(), ErrTruncated},
		{"forged string length", func() error { _, err := DecodeValue[string]([]byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'a'}); return err }(), ErrTruncated},
		{"deep nesting", func() error {
			_, err := DecodeValue[any](append(bytes.Repeat([]byte{0x91}, 2*maxDepth), 0xc0))
			return err
		}(), ErrDecode},
		{"reserved code", func() error { _, err := DecodeValue[any]([]byte{0xc1}); return err }(), ErrDecode},
		{"encode custom", func() error { _, err := EncodeValue(nil, failing{Bad: true}); return err }(), ErrEncode},
		{"encode unsupported", func() error { _, err := EncodeValue(nil, make(chan int)); return err }(), ErrEncode},
		{"items encode", func() error { _, err := EncodeItems(nil, []failing{{}, {Bad: true}}); return err }(), ErrEncode},
	}
	for _, c := range cases {
		if !isKind(c.err, c.kind) {
			t.Errorf("%s: got %v, want kind %v", c.name, c.err, c.kind)
		}
	}
	var we *Error
	if err := cases[len(cases)-3].err; !errors.As(err, &we) || !errors.Is(err, errMarked) {
		t.Errorf("encode error %v does not unwrap to the encoder's error", err)
	}
}

func TestLengthLimit(t *testing.T) {
	old := MaxBytes
	MaxBytes = HeaderSize + 64
	defer func() { MaxBytes = old }()
	if _, err := EncodeValue(nil, make([]byte, 62)); err != nil {
		t.Fatalf("62-byte value within a 64-byte payload limit: %v", err)
	}
	for name, f := range map[string]func() error{
		"bulk":   func() error { _, err := EncodeValue(nil, make([]float64, 8)); return err },
		"string": func() error { _, err := EncodeValue(nil, string(make([]byte, 64))); return err },
		"items":  func() error { _, err := EncodeItems(nil, make([]int64, 10)); return err },
		"header": func() error {
			b := make([]byte, HeaderSize)
			Header{Version: Version, Kind: KindGather, Len: 65}.Put(b)
			_, err := ParseHeader(b)
			return err
		},
	} {
		if err := f(); !isKind(err, ErrLength) {
			t.Errorf("%s: got %v, want ErrLength", name, err)
		}
	}
	MaxBytes = 3
	if lim := PayloadLimit(); lim != 0 {
		t.Errorf("PayloadLimit with MaxBytes < HeaderSize = %d", lim)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Version: Version, Kind: KindResult, Status: 3, Count: math.MaxUint32, BatchID: math.MaxUint64, Len: 1 << 30}
	b := make([]byte, HeaderSize)
	h.Put(b)
	got, err := ParseHeader(b)
	if err != nil || got != h {
		t.Fatalf("ParseHeader = %+v, %v; want %+v", got, err, h)
	}
	if KindGather.String() != "GATHER" || Kind(99).String() != "Kind(99)" || ErrTrailing.String() != "trailing bytes" {
		t.Errorf("String methods: %v %v %v", KindGather, Kind(99), ErrTrailing)
	}
}

// boom's decoder panics: user code, whose panic must go on up.
type boom struct{ V int }

func (b *boom) DecodeMsgpack(*msgpack.Decoder) error { panic("boom's decoder") }

// extStamp is a value type with a msgpack extension coder registered by
// function (msgpack.RegisterExtEncoder/Decoder), as msgpack's own
// time.Time extension was.
type extStamp struct{ V int8 }

func init() {
	msgpack.RegisterExtEncoder(77, extStamp{}, func(_ *msgpack.Encoder, v reflect.Value) ([]byte, error) {
		return []byte{byte(v.Interface().(extStamp).V)}, nil
	})
	msgpack.RegisterExtDecoder(77, extStamp{}, func(d *msgpack.Decoder, v reflect.Value, n int) error {
		b := make([]byte, n)
		if err := d.ReadFull(b); err != nil || n != 1 {
			return fmt.Errorf("extStamp: %d bytes (%v)", n, err)
		}
		v.Set(reflect.ValueOf(extStamp{int8(b[0])}))
		return nil
	})
}

// TestDecodeNilIntoCustomValue: msgpack panics on a nil where a value type
// with an extension decoder registered by function is expected; the codec
// turns that into ErrDecode (found by FuzzDecodeValue on time.Time, whose
// coder is now the codec's own, which fails with an error), but lets a
// custom decoder's own panic through.
func TestDecodeNilIntoCustomValue(t *testing.T) {
	type withStamp struct{ S extStamp }
	if b, err := EncodeValue(nil, withStamp{extStamp{-3}}); err != nil {
		t.Fatal(err)
	} else if v, err := DecodeValue[withStamp](b); err != nil || v.S.V != -3 {
		t.Fatalf("extStamp round trip = %v, %v", v, err)
	}
	if _, err := DecodeValue[withStamp]([]byte{0x81, 0xa1, 'S', codeNil}); !isKind(err, ErrDecode) || !strings.Contains(err.Error(), "nil where a struct value") {
		t.Errorf("nil into an extStamp field = %v, want ErrDecode", err)
	}
	type withTime struct{ When time.Time }
	nilField := []byte{0x81, 0xa4, 'W', 'h', 'e', 'n', codeNil}
	if _, err := DecodeValue[withTime](nilField); !isKind(err, ErrDecode) {
		t.Errorf("nil into a time.Time field = %v, want ErrDecode", err)
	}
	if _, err := DecodeItems[[]time.Time]([]byte{0x91, codeNil, 0x90}, 2); !isKind(err, ErrDecode) {
		t.Errorf("nil into a time.Time element = %v, want ErrDecode", err)
	}
	if v, err := DecodeValue[*custom]([]byte{codeNil}); v != nil || err != nil {
		t.Errorf("nil into *custom = %v, %v; want nil, nil", v, err)
	}
	defer func() {
		if r := recover(); r != "boom's decoder" {
			t.Errorf("recovered %v, want the custom decoder's own panic", r)
		}
	}()
	_, _ = DecodeValue[boom]([]byte{0x01})
	t.Error("the custom decoder's panic was swallowed")
}
