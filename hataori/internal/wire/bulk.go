package wire

import (
	"encoding/binary"
	"reflect"
	"sync"
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

const maxInt = int(^uint(0) >> 1)
