//go:build mpirt || mpicgo

package wire

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// The payload codec's path for the commonest item and result types, the
// builtin int, int64, uint, uint64 and float64 (exactly those types, not
// types defined on them, which may have coding methods): msgpack by hand,
// a few nanoseconds a value where the msgpack library's reflection takes
// about a hundred, which a batch of 2 µs items pays once per item on both
// ends. The bytes are the library's (a test compares them), so either side
// may take either path. Decoding takes this path only while every value is
// one of the numeric codes the library accepts for the type, decoded as it
// decodes them; any other payload (nil, a wrong type, a truncated or
// overlong one) goes the library's way, which also reports the error.

// scalarKind names the types with the hand-written path.
type scalarKind uint8

const (
	scalarNone scalarKind = iota
	scalarInt
	scalarInt64
	scalarUint
	scalarUint64
	scalarFloat64
)

// msgpack codes of numbers (the specification's format bytes; codeNil is
// the bulk path's, widths come from codeLayout).
const (
	codeFloat32 = 0xca
	codeFloat64 = 0xcb
	codeUint8   = 0xcc
	codeUint16  = 0xcd
	codeUint32  = 0xce
	codeUint64  = 0xcf
	codeInt8    = 0xd0
	codeInt16   = 0xd1
	codeInt32   = 0xd2
	codeInt64   = 0xd3
	codeNegFix  = 0xe0 // negative fixint: 0xe0–0xff
)

// scalarOf returns T's kind, scalarNone for every other type (and for the
// 8-byte kinds on a host where int is not 8 bytes).
func scalarOf[T any]() scalarKind {
	var v T
	switch any(v).(type) {
	case int:
		if unsafe.Sizeof(v) == 8 {
			return scalarInt
		}
	case int64:
		return scalarInt64
	case uint:
		if unsafe.Sizeof(v) == 8 {
			return scalarUint
		}
	case uint64:
		return scalarUint64
	case float64:
		return scalarFloat64
	}
	return scalarNone
}

// appendScalar appends the msgpack encoding of the 8-byte value at p, of
// kind k, as the library's Encoder.Encode writes it: int and uint in their
// shortest form, int64, uint64 and float64 in 9 bytes.
func appendScalar(b []byte, k scalarKind, p unsafe.Pointer) []byte {
	bits := *(*uint64)(p)
	switch k {
	case scalarInt:
		return appendCompactInt(b, int64(bits))
	case scalarUint:
		return appendCompactUint(b, bits)
	case scalarInt64:
		return appendCode8(b, codeInt64, bits)
	case scalarUint64:
		return appendCode8(b, codeUint64, bits)
	default: // scalarFloat64
		return appendCode8(b, codeFloat64, bits)
	}
}

func appendCode8(b []byte, code byte, bits uint64) []byte {
	b = append(b, code)
	return binary.BigEndian.AppendUint64(b, bits)
}

// appendCompactUint is the library's EncodeUint.
func appendCompactUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, codeUint8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeUint16), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, codeUint32), uint32(n))
	}
	return appendCode8(b, codeUint64, n)
}

// appendCompactInt is the library's EncodeInt.
func appendCompactInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendCompactUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, codeInt8, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, codeInt16), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, codeInt32), uint32(n))
	}
	return appendCode8(b, codeInt64, uint64(n))
}

// decodeScalars decodes count values of kind k from p into out (len
// count), as the library's Decoder.Decode into a *T would, and reports
// false, leaving out partly written, when p is anything but exactly count
// values of codes that decode to T (the caller then takes the library's
// path).
func decodeScalars[T any](k scalarKind, p []byte, out []T) bool {
	for i := range out {
		bits, n, ok := scalarBits(k, p)
		if !ok {
			return false
		}
		*(*uint64)(unsafe.Pointer(&out[i])) = bits
		p = p[n:]
	}
	return len(p) == 0
}

// scalarBits decodes one value of kind k at the start of p: its 8 bytes
// and the bytes it took.
func scalarBits(k scalarKind, p []byte) (uint64, int, bool) {
	if len(p) == 0 {
		return 0, 0, false
	}
	c := p[0]
	if k == scalarFloat64 {
		switch c {
		case codeFloat32:
			if len(p) < 5 {
				return 0, 0, false
			}
			f := math.Float32frombits(binary.BigEndian.Uint32(p[1:]))
			return math.Float64bits(float64(f)), 5, true
		case codeFloat64:
			if len(p) < 9 {
				return 0, 0, false
			}
			return binary.BigEndian.Uint64(p[1:]), 9, true
		}
		// The library decodes an integer code into a float64 by value.
		n, w, ok := integerBits(p)
		return math.Float64bits(float64(int64(n))), w, ok
	}
	// Into int, int64, uint and uint64 the library takes every integer
	// code (and nil as 0), converting through int64 or uint64 bits.
	return integerBits(p)
}

// integerBits decodes an integer code (or nil) as the library's int and
// uint do: the value's two's-complement bits, sign-extended from signed
// codes, zero-extended from unsigned ones.
func integerBits(p []byte) (uint64, int, bool) {
	c := p[0]
	switch {
	case c <= 0x7f:
		return uint64(c), 1, true
	case c >= codeNegFix:
		return uint64(int64(int8(c))), 1, true
	case c == codeNil:
		return 0, 1, true
	case c < codeUint8 || c > codeInt64:
		return 0, 0, false
	}
	w := 1 << ((c - codeUint8) & 3) // uint 8, 16, 32, 64, then int 8 … 64 (codeLayout's widths)
	if len(p) < 1+w {
		return 0, 0, false
	}
	var n uint64
	switch b := p[1 : 1+w]; w {
	case 1:
		n = uint64(b[0])
	case 2:
		n = uint64(binary.BigEndian.Uint16(b))
	case 4:
		n = uint64(binary.BigEndian.Uint32(b))
	default:
		n = binary.BigEndian.Uint64(b)
	}
	if c >= codeInt8 && w < 8 {
		shift := 64 - 8*w
		n = uint64(int64(n<<shift) >> shift)
	}
	return n, 1 + w, true
}
