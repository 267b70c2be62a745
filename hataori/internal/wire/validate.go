//go:build mpirt || mpicgo

package wire

import "encoding/binary"

// maxDepth bounds the nesting of arrays and maps in a msgpack payload, so
// decoding (which recurses) cannot exhaust the stack.
const maxDepth = 1000

// validate checks that p holds exactly count well-formed msgpack values
// before any of them is decoded: every declared string, binary and extension
// length fits in the bytes that remain, every declared array or map length
// is at most the number of bytes that remain (each element takes at least
// one byte), nesting is at most maxDepth, and no byte is left over. msgpack
// itself preallocates maps from their declared length, so this scan is what
// keeps a forged length from allocating memory that was never sent. It
// costs one pass over the container structure and skips string and binary
// contents.
func validate(p []byte, count int) error {
	// stack[i] is the number of values still to read at nesting level i.
	stack := make([]int, 1, 8)
	stack[0] = count
	i := 0
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		next, n, err := scanValue(p, i)
		if err != nil {
			return err
		}
		i = next
		if n > 0 {
			if len(stack) > maxDepth {
				return errorf(ErrDecode, nil, "nesting deeper than %d", maxDepth)
			}
			stack = append(stack, n)
		}
	}
	if i != len(p) {
		return errorf(ErrTrailing, nil, "%d bytes after %d values", len(p)-i, count)
	}
	return nil
}

// scanValue checks the msgpack value that starts at offset i of p, up to
// its nested values: its code, its length field, and that its content and
// the nested values it announces fit in the bytes of p that remain (each
// nested value takes at least one byte). It returns the offset past the
// value's code, length field and content, and n, the number of nested
// values that follow there (array elements, or map keys and values). It
// costs O(1): the content is skipped, not read.
func scanValue(p []byte, i int) (next, n int, err error) {
	if i >= len(p) {
		return 0, 0, errorf(ErrTruncated, nil, "payload ends where a value should start (offset %d)", i)
	}
	start := i
	c := p[i]
	i++
	v, ok := codeLayout(c)
	if !ok {
		return 0, 0, errorf(ErrDecode, nil, "invalid msgpack code 0x%02x at offset %d", c, start)
	}
	skip, n := v.skip, v.n
	if v.lenBytes > 0 {
		l, err := lengthField(p, i, v.lenBytes)
		if err != nil {
			return 0, 0, err
		}
		i += v.lenBytes
		switch c {
		case 0xdc, 0xdd: // array 16, 32
			n = int(l)
		case 0xde, 0xdf: // map 16, 32
			n = 2 * int(l)
		default: // str, bin, ext: l bytes of content
			skip += int(l)
		}
	}
	if skip > len(p)-i {
		return 0, 0, errorf(ErrTruncated, nil, "value at offset %d needs %d bytes, %d remain", start, skip, len(p)-i)
	}
	i += skip
	if n > len(p)-i {
		return 0, 0, errorf(ErrTruncated, nil, "container at offset %d announces %d values, %d bytes remain", start, n, len(p)-i)
	}
	return i, n, nil
}

// lengthField reads the big-endian length field of size bytes (1, 2 or 4)
// at offset i of p, and checks that the field fits in p and that the
// length it declares is at most len(p).
func lengthField(p []byte, i, size int) (uint64, error) {
	if len(p)-i < size {
		return 0, errorf(ErrTruncated, nil, "length field at offset %d cut short", i)
	}
	var l uint64
	switch size {
	case 1:
		l = uint64(p[i])
	case 2:
		l = uint64(binary.BigEndian.Uint16(p[i:]))
	default:
		l = uint64(binary.BigEndian.Uint32(p[i:]))
	}
	if l > uint64(len(p)) {
		return 0, errorf(ErrTruncated, nil, "length %d at offset %d exceeds the %d remaining bytes", l, i, len(p)-i-size)
	}
	return l, nil
}

// valueLayout is what the first byte of a msgpack value (its code) says
// about the bytes that follow it.
type valueLayout struct {
	// lenBytes is the size of the big-endian length field that follows
	// the code (0: none). What the length counts depends on the code: the
	// elements of an array, the pairs of a map, or otherwise bytes of
	// content.
	lenBytes int
	// skip is the number of content bytes known from the code alone (for
	// an extension, its type byte).
	skip int
	// n is the number of nested values known from the code alone (fixarray
	// and fixmap).
	n int
}

// codeLayout is the msgpack format's table of codes: the layout of a value
// whose code is c, or ok false for 0xc1, the one code msgpack never uses.
func codeLayout(c byte) (v valueLayout, ok bool) {
	switch {
	case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixint, nil, false, true
	case c >= 0x80 && c <= 0x8f: // fixmap
		v.n = 2 * int(c&0x0f)
	case c >= 0x90 && c <= 0x9f: // fixarray
		v.n = int(c & 0x0f)
	case c >= 0xa0 && c <= 0xbf: // fixstr
		v.skip = int(c & 0x1f)
	case c == 0xc4 || c == 0xd9: // bin 8, str 8
		v.lenBytes = 1
	case c == 0xc5 || c == 0xda: // bin 16, str 16
		v.lenBytes = 2
	case c == 0xc6 || c == 0xdb: // bin 32, str 32
		v.lenBytes = 4
	case c == 0xc7: // ext 8
		v.lenBytes, v.skip = 1, 1
	case c == 0xc8: // ext 16
		v.lenBytes, v.skip = 2, 1
	case c == 0xc9: // ext 32
		v.lenBytes, v.skip = 4, 1
	case c == 0xca: // float 32
		v.skip = 4
	case c == 0xcb: // float 64
		v.skip = 8
	case c == 0xcc || c == 0xd0: // uint 8, int 8
		v.skip = 1
	case c == 0xcd || c == 0xd1: // uint 16, int 16
		v.skip = 2
	case c == 0xce || c == 0xd2: // uint 32, int 32
		v.skip = 4
	case c == 0xcf || c == 0xd3: // uint 64, int 64
		v.skip = 8
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		v.skip = 1 + 1<<(c-0xd4)
	case c == 0xdc || c == 0xde: // array 16, map 16
		v.lenBytes = 2
	case c == 0xdd || c == 0xdf: // array 32, map 32
		v.lenBytes = 4
	default: // 0xc1 is never used
		return v, false
	}
	return v, true
}
