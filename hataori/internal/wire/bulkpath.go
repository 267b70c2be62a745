//go:build mpirt || mpicgo

package wire

import (
	"reflect"
	"unsafe"
)

// The bulk path of the codec (builds with an MPI backend only).

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
