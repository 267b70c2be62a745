package wire

// The payload codec's entry points. The codec itself (encodeValue,
// encodeItems, decodeValue, decodeItems) is codec_msgpack.go in builds with
// an MPI backend (tag mpirt or mpicgo); without one it is codec_none.go,
// which links no serialization library and fails every call, since nothing
// crosses ranks in such a build.

// EncodeValue appends the payload encoding of v to dst and returns the
// extended slice. Reserve HeaderSize bytes at the front of dst to send header
// and payload as one message without a copy. It fails with ErrEncode when
// msgpack cannot encode v (and always in a build without an MPI backend) and
// with ErrLength when the payload would exceed PayloadLimit; on failure the
// returned slice is dst's prefix and must not be sent.
func EncodeValue[T any](dst []byte, v T) ([]byte, error) {
	countEncode()
	return encodeValue(dst, v)
}

// EncodeItems appends the payloads of items, one after another, to dst and
// returns the extended slice; the item count travels in the frame header.
// Errors are as for EncodeValue; an error about one item names it
// (ItemPosition).
func EncodeItems[T any](dst []byte, items []T) ([]byte, error) {
	countEncode()
	return encodeItems(dst, items)
}

// DecodeValue decodes a payload holding exactly one value. Bytes left over
// are ErrTrailing. The result never shares memory with payload. Without an
// MPI backend it always fails with ErrDecode.
func DecodeValue[T any](payload []byte) (T, error) {
	countDecode()
	return decodeValue[T](payload, false)
}

// DecodeValueOwned is DecodeValue for a payload the caller hands over and
// never uses again: a value on the bulk path aliases payload's memory
// instead of copying it when its data is aligned for the element type (see
// AlignPad), so receiving a large numeric slice costs no copy beyond MPI's.
func DecodeValueOwned[T any](payload []byte) (T, error) {
	countDecode()
	return decodeValue[T](payload, true)
}

// DecodeItemsOwned decodes a payload holding exactly count values, which
// the caller hands over and never uses again. A negative count, or a count
// larger than the payload's size (every value takes at least one byte), is
// ErrCount; a payload that ends early is ErrTruncated; bytes left over are
// ErrTrailing; an error about one item names it (ItemPosition). The result
// is non-nil, even for count 0. Each value on the bulk path whose data is
// aligned for its element type aliases payload's memory instead of copying
// it (the first value is aligned when the frame was placed as AlignPad
// says). Aliased values are capacity-limited, so appending to one never
// writes into another; together they keep the payload's memory alive.
// Without an MPI backend it always fails with ErrDecode.
func DecodeItemsOwned[T any](payload []byte, count int) ([]T, error) {
	countDecode()
	return decodeItems[T](payload, count, true)
}

// AlignPad returns how many bytes to leave free in front of a received
// frame, in a buffer whose start is 8-byte aligned, so that a bulk value's
// data in a payload of payloadLen bytes starting at offset off of the frame
// is 8-byte aligned (the bin header is 2, 3 or 5 bytes depending on the
// length). DecodeValueOwned can then alias the data instead of copying it.
func AlignPad(off, payloadLen int) int {
	hl := 5
	switch {
	case payloadLen-2 <= 0xff:
		hl = 2
	case payloadLen-3 <= 0xffff:
		hl = 3
	}
	return (8 - (off+hl)%8) % 8
}
