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
		if i >= len(p) {
			return errorf(ErrTruncated, nil, "payload ends where a value should start (offset %d)", i)
		}
		c := p[i]
		i++
		var skip, n int // skip: bytes of content; n: nested values
		var lenBytes int
		switch {
		case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		case c >= 0x80 && c <= 0x8f:
			n = 2 * int(c&0x0f)
		case c >= 0x90 && c <= 0x9f:
			n = int(c & 0x0f)
		case c >= 0xa0 && c <= 0xbf:
			skip = int(c & 0x1f)
		case c == 0xc4 || c == 0xd9:
			lenBytes = 1
		case c == 0xc5 || c == 0xda:
			lenBytes = 2
		case c == 0xc6 || c == 0xdb:
			lenBytes = 4
		case c == 0xc7:
			lenBytes, skip = 1, 1
		case c == 0xc8:
			lenBytes, skip = 2, 1
		case c == 0xc9:
			lenBytes, skip = 4, 1
		case c == 0xca:
			skip = 4
		case c == 0xcb:
			skip = 8
		case c == 0xcc || c == 0xd0:
			skip = 1
		case c == 0xcd || c == 0xd1:
			skip = 2
		case c == 0xce || c == 0xd2:
			skip = 4
		case c == 0xcf || c == 0xd3:
			skip = 8
		case c >= 0xd4 && c <= 0xd8:
			skip = 1 + 1<<(c-0xd4)
		case c == 0xdc || c == 0xde:
			lenBytes = 2
		case c == 0xdd || c == 0xdf:
			lenBytes = 4
		default: // 0xc1 is never used
			return errorf(ErrDecode, nil, "invalid msgpack code 0x%02x at offset %d", c, i-1)
		}
		if lenBytes > 0 {
			if len(p)-i < lenBytes {
				return errorf(ErrTruncated, nil, "length field at offset %d cut short", i)
			}
			var l uint64
			switch lenBytes {
			case 1:
				l = uint64(p[i])
			case 2:
				l = uint64(binary.BigEndian.Uint16(p[i:]))
			default:
				l = uint64(binary.BigEndian.Uint32(p[i:]))
			}
			i += lenBytes
			if l > uint64(len(p)) {
				return errorf(ErrTruncated, nil, "length %d at offset %d exceeds the %d remaining bytes", l, i-lenBytes, len(p)-i)
			}
			switch c {
			case 0xdc, 0xdd:
				n = int(l)
			case 0xde, 0xdf:
				n = 2 * int(l)
			default:
				skip += int(l)
			}
		}
		if skip > len(p)-i {
			return errorf(ErrTruncated, nil, "value at offset %d needs %d bytes, %d remain", i-1, skip, len(p)-i)
		}
		i += skip
		if n > 0 {
			if n > len(p)-i {
				return errorf(ErrTruncated, nil, "container at offset %d announces %d values, %d bytes remain", i-1, n, len(p)-i)
			}
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
