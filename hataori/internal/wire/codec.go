package wire

import "reflect"

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

// Segment is bulk data that travels outside its payload
// (EncodeItemsSegmented, DecodeItemsSegments): the data of one bulk value
// (a slice on the bulk path, or a nested Bulk), whose bin header stays in
// the payload. Off is where the data belongs in the payload: the end of
// that bin header, in the payload that omits every segment's data (in
// EncodeItemsSegmented's result: an offset in the returned slice, dst's
// prefix included).
type Segment struct {
	Off  int
	Data []byte
}

// EncodeItemsSegmented is EncodeItems, except that the data of every bulk
// value of at least segMin bytes (a slice on the bulk path, or a nested
// Bulk) stays out of the payload: its bin header is written, and its data
// is returned as a segment that aliases the value's own memory, in payload
// order, so that it can be sent from there without a copy. Inserting each
// segment's data at its Off gives EncodeItems' payload; the payload limit
// applies to that whole. segMin must be positive. On a big-endian host
// nothing becomes a segment.
func EncodeItemsSegmented[T any](dst []byte, items []T, segMin int) ([]byte, []Segment, error) {
	countEncode()
	return encodeItemsSeg(dst, items, max(segMin, 1))
}

// DecodeItemsSegments is DecodeItemsOwned for a payload from
// EncodeItemsSegmented of a type on the bulk path (BulkPath), with each
// segment's data received into memory of its own (segs, in payload order,
// Off relative to payload): each value whose data is a segment aliases
// that segment when it is aligned for its element type (it is whenever the
// segment starts a Go allocation). A segment whose length differs from its
// bin, or one left over, is a wire error. T not on the bulk path with
// segments is ErrDecode: such a payload is decoded after its segments have
// been received into place (DecodeItemsOwned).
func DecodeItemsSegments[T any](payload []byte, count int, segs []Segment) ([]T, error) {
	countDecode()
	return decodeItemsSeg[T](payload, count, segs, true)
}

// BulkPath reports whether T itself takes the bulk path (a numeric slice
// without coding methods), so that DecodeItemsSegments accepts segments
// received apart from the payload.
func BulkPath[T any]() bool { return shapeOf(reflect.TypeFor[T]()).ok }

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
