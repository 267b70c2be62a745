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
	v, err := bulkValue(p[hl:hl+n:hl+n], t, s, alias)
	return v, hl + n, err
}

// bulkValue is the bulk value of type t whose little-endian bytes are
// data: with alias set, data's memory itself when it is aligned for t's
// elements (the caller hands data over), else a copy.
func bulkValue(data []byte, t reflect.Type, s bulkShape, alias bool) (reflect.Value, error) {
	n := len(data)
	if n%s.size != 0 {
		return reflect.Value{}, errorf(ErrDecode, nil, "%d bytes is not a whole number of %d-byte %s elements", n, s.size, t.Elem())
	}
	if alias && n > 0 && uintptr(unsafe.Pointer(&data[0]))%uintptr(t.Elem().Align()) == 0 {
		if !nativeLittle {
			swapGroups(data, s.group)
		}
		return reflect.SliceAt(t.Elem(), unsafe.Pointer(&data[0]), n/s.size).Convert(t), nil
	}
	v := reflect.MakeSlice(t, n/s.size, n/s.size)
	if n > 0 {
		out := unsafe.Slice((*byte)(v.UnsafePointer()), n)
		copy(out, data)
		if !nativeLittle {
			swapGroups(out, s.group)
		}
	}
	return v, nil
}

// sliceBytes returns the bytes of *v, a slice of size-byte elements, as
// they lie in memory, and whether it is nil. No reflection, so that v does
// not escape when a segment keeps its data.
func sliceBytes[T any](v *T, size int) (data []byte, isNil bool) {
	h := (*struct {
		p    unsafe.Pointer
		l, c int
	})(unsafe.Pointer(v))
	if h.p == nil {
		return nil, true
	}
	return unsafe.Slice((*byte)(h.p), h.l*size), false
}

// appendBulkTo appends a bulk value (data, its bytes in memory; isNil for
// a nil slice) to w as msgpack nil or bin; its data goes into a segment
// instead when w takes segments of its size (w.external). ok is false when
// the value does not fit in room (nothing is appended).
func appendBulkTo(w *appendWriter, data []byte, isNil bool, s bulkShape, room int64) (ok bool) {
	if isNil {
		if room < 1 {
			return false
		}
		w.b = append(w.b, codeNil)
		return true
	}
	n := len(data)
	if int64(n) > int64(^uint32(0)) || int64(n)+int64(binHeaderLen(n)) > room {
		return false
	}
	if w.external(n) {
		w.b = appendBinHeader(w.b, n)
		w.addSegment(data)
		return true
	}
	w.b = appendBinHeader(growCap(w.b, binHeaderLen(n)+n), n)
	start := len(w.b)
	w.b = append(w.b, data...)
	if !nativeLittle {
		swapGroups(w.b[start:], s.group)
	}
	return true
}
