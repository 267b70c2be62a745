package wire

import (
	"encoding/binary"
	"reflect"
	"sync"
	"unsafe"
)

// Number is the set of fixed-size number types a bulk slice may hold
// (EncodeBulk, DecodeBulk; hataori.Number has the same type set).
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 |
		~int | ~uint | ~float32 | ~float64 | ~complex64 | ~complex128
}

// msgpack format codes used by the bulk path (msgpack lengths are big-endian).
const (
	codeNil   = 0xc0
	codeBin8  = 0xc4
	codeBin16 = 0xc5
	codeBin32 = 0xc6
)

// nativeLittle reports whether the host stores numbers little-endian, in
// which case bulk slices are copied as they lie in memory.
var nativeLittle = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// bulkShape describes a slice type eligible for the bulk path, and how
// msgpack must be handed the other types.
type bulkShape struct {
	ok    bool
	size  int // element size in bytes
	group int // byte-swap unit: size, or size/2 for complex numbers
	// addr: hand msgpack an addressable value, so that encoding methods
	// with pointer receivers (on the type or on its fields or elements)
	// can be called; other types take msgpack's faster Encode(any).
	addr bool
}

var bulkCache sync.Map // reflect.Type → bulkShape

// customCoded reports whether msgpack would use a method of t (or *t) to
// encode or decode it; such types keep their own encoding.
func customCoded(t reflect.Type) bool { return encodeMethod(t) != "" || decodeMethod(t) != "" }

// shapeOf returns the bulk shape of t: a slice of a fixed-size number type
// whose slice and element types have no msgpack/encoding methods.
func shapeOf(t reflect.Type) bulkShape {
	if t == nil {
		return bulkShape{}
	}
	if s, ok := bulkCache.Load(t); ok {
		return s.(bulkShape)
	}
	var s bulkShape
	if t.Kind() == reflect.Slice {
		e := t.Elem()
		switch e.Kind() {
		case reflect.Int8, reflect.Uint8, reflect.Int16, reflect.Uint16, reflect.Int32, reflect.Uint32,
			reflect.Int64, reflect.Uint64, reflect.Int, reflect.Uint, reflect.Float32, reflect.Float64:
			s = bulkShape{ok: true, size: int(e.Size()), group: int(e.Size())}
		case reflect.Complex64, reflect.Complex128:
			s = bulkShape{ok: true, size: int(e.Size()), group: int(e.Size()) / 2}
		}
		if s.ok && (customCoded(t) || customCoded(e)) {
			s = bulkShape{}
		}
	}
	if !s.ok {
		k := t.Kind()
		s.addr = k == reflect.Struct || k == reflect.Array || ptrOnlyEncoder(t)
	}
	bulkCache.Store(t, s)
	return s
}

// swapGroups reverses the bytes of every g-byte group of b (big-endian hosts).
func swapGroups(b []byte, g int) {
	if g <= 1 {
		return
	}
	for i := 0; i+g <= len(b); i += g {
		for l, r := i, i+g-1; l < r; l, r = l+1, r-1 {
			b[l], b[r] = b[r], b[l]
		}
	}
}

// binHeaderLen is the size of the msgpack bin header for n bytes.
func binHeaderLen(n int) int {
	switch {
	case n <= 0xff:
		return 2
	case n <= 0xffff:
		return 3
	default:
		return 5
	}
}

func appendBinHeader(dst []byte, n int) []byte {
	switch {
	case n <= 0xff:
		return append(dst, codeBin8, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(dst, codeBin16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(dst, codeBin32), uint32(n))
	}
}

// appendBulk appends slice value rv (of shape s) as msgpack nil or bin.
func appendBulk(dst []byte, rv reflect.Value, s bulkShape, room int64) ([]byte, error) {
	if rv.IsNil() {
		if room < 1 {
			return dst, errorf(ErrLength, nil, "payload exceeds limit %d", PayloadLimit())
		}
		return append(dst, codeNil), nil
	}
	n64 := int64(rv.Len()) * int64(s.size)
	if n64 > int64(^uint32(0)) || n64+int64(binHeaderLen(int(n64))) > room {
		return dst, errorf(ErrLength, nil, "%d-byte %s exceeds payload limit %d", n64, rv.Type(), PayloadLimit())
	}
	n := int(n64)
	var src []byte
	if n > 0 {
		src = unsafe.Slice((*byte)(rv.UnsafePointer()), n)
	}
	dst = appendBinHeader(growCap(dst, binHeaderLen(n)+n), n)
	start := len(dst)
	dst = append(dst, src...)
	if !nativeLittle {
		swapGroups(dst[start:], s.group)
	}
	return dst, nil
}

// bulkItemsLen is the payload size of items of bulk shape s (nil is one
// byte, any other slice a bin header and its data), or 0 when that exceeds
// PayloadLimit, so that an oversized batch allocates nothing here (the
// encoder then reports ErrLength).
func bulkItemsLen[T any](items []T, s bulkShape) int {
	lim := PayloadLimit()
	var total int64
	for i := range items {
		rv := reflect.ValueOf(&items[i]).Elem()
		n := int64(1)
		if !rv.IsNil() {
			b := int64(rv.Len()) * int64(s.size)
			n = b + int64(binHeaderLen(int(min(b, int64(maxInt)))))
		}
		if total += n; total > lim {
			return 0
		}
	}
	return int(total)
}

// growCap makes room for n more bytes with at most one reallocation.
func growCap(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}

// binHead parses a msgpack nil or bin header at the front of p: it returns
// the announced byte count n (-1 for nil) and the header length hl. A bin
// longer than the bytes after its header is ErrTruncated.
func binHead(p []byte, t reflect.Type) (n, hl int, err error) {
	n, hl, err = binHeader(p, t)
	if err == nil && n > len(p)-hl {
		return 0, 0, errorf(ErrTruncated, nil, "bin announces %d bytes, %d remain", n, len(p)-hl)
	}
	return n, hl, err
}

// binHeader is binHead without the check against the bytes present.
func binHeader(p []byte, t reflect.Type) (n, hl int, err error) {
	if len(p) == 0 {
		return 0, 0, errorf(ErrTruncated, nil, "missing %s value", t)
	}
	switch p[0] {
	case codeNil:
		return -1, 1, nil
	case codeBin8:
		hl = 2
	case codeBin16:
		hl = 3
	case codeBin32:
		hl = 5
	default:
		return 0, 0, errorf(ErrDecode, nil, "%s: want msgpack bin or nil, found code 0x%02x", t, p[0])
	}
	if len(p) < hl {
		return 0, 0, errorf(ErrTruncated, nil, "bin header needs %d bytes, have %d", hl, len(p))
	}
	switch hl {
	case 2:
		n = int(p[1])
	case 3:
		n = int(binary.BigEndian.Uint16(p[1:]))
	default:
		n64 := uint64(binary.BigEndian.Uint32(p[1:]))
		if n64 > uint64(maxInt) {
			return 0, 0, errorf(ErrOverflow, nil, "bin length %d", n64)
		}
		n = int(n64)
	}
	return n, hl, nil
}

// readBulk decodes one bulk value of type t from the front of p and returns
// it with the number of bytes consumed. A declared length longer than p is
// ErrTruncated and nothing is allocated for it. With alias set, the value
// uses p's memory instead of a copy when p's data is suitably aligned for
// t's elements (the caller hands p over).
func readBulk(p []byte, t reflect.Type, s bulkShape, alias bool) (reflect.Value, int, error) {
	n, hl, err := binHead(p, t)
	if err != nil {
		return reflect.Value{}, 0, err
	}
	if n < 0 {
		return reflect.Zero(t), hl, nil
	}
	if n%s.size != 0 {
		return reflect.Value{}, 0, errorf(ErrDecode, nil, "%d bytes is not a whole number of %d-byte %s elements", n, s.size, t.Elem())
	}
	data := p[hl : hl+n : hl+n]
	if alias && n > 0 && uintptr(unsafe.Pointer(&data[0]))%uintptr(t.Elem().Align()) == 0 {
		if !nativeLittle {
			swapGroups(data, s.group)
		}
		v := reflect.SliceAt(t.Elem(), unsafe.Pointer(&data[0]), n/s.size).Convert(t)
		return v, hl + n, nil
	}
	v := reflect.MakeSlice(t, n/s.size, n/s.size)
	if n > 0 {
		out := unsafe.Slice((*byte)(v.UnsafePointer()), n)
		copy(out, data)
		if !nativeLittle {
			swapGroups(out, s.group)
		}
	}
	return v, hl + n, nil
}

const maxInt = int(^uint(0) >> 1)
