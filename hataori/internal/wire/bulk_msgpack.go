//go:build mpirt || mpicgo

package wire

import (
	"reflect"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// bulkReadChunk bounds each allocation while decoding a bulk slice, so a
// forged length never allocates more than about twice the bytes actually
// present.
const bulkReadChunk = 1 << 20

// EncodeBulk writes s to enc as one msgpack bin value holding its elements'
// little-endian bytes: msgpack nil for a nil s, an empty bin for an empty
// one, so nil and empty stay distinct. It is the body of the EncodeMsgpack
// method of a bulk slice type (hataori.Bulk), which msgpack calls wherever
// such a value is nested. On a little-endian host it copies s's bytes once,
// into enc; on a big-endian host it swaps a copy. It fails with ErrLength
// when s holds more than 4 GiB - 1 bytes (the msgpack bin limit).
func EncodeBulk[E Number](enc *msgpack.Encoder, s []E) error {
	if s == nil {
		return enc.EncodeNil()
	}
	var e E
	size := int(unsafe.Sizeof(e))
	n := len(s) * size
	if int64(n) > int64(^uint32(0)) {
		return errorf(ErrLength, nil, "%d-byte bulk slice exceeds the msgpack bin limit", n)
	}
	// Never nil: msgpack's EncodeBytes writes a nil slice as msgpack nil,
	// which would turn an empty slice into a nil one on the receiver.
	raw := []byte{}
	if n > 0 {
		raw = unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), n)
	}
	if w, ok := enc.Writer().(*appendWriter); ok && w.external(n) {
		// EncodeItemsSegmented: the data travels from s's own memory.
		if err := enc.EncodeBytesLen(n); err != nil {
			return err
		}
		w.addSegment(raw)
		return nil
	}
	if nativeLittle {
		return enc.EncodeBytes(raw)
	}
	swapped := append([]byte{}, raw...)
	swapGroups(swapped, groupOf[E]())
	return enc.EncodeBytes(swapped)
}

// DecodeBulk reads what EncodeBulk wrote: nil for msgpack nil, otherwise a
// new slice of the bin's elements (never sharing memory with the input),
// except inside DecodeItemsOwned and DecodeValueOwned, where a bin whose
// data is aligned for E aliases the payload that was handed over. A bin
// that is not a whole number of elements is ErrDecode; msgpack's own
// errors (a value that is not a bin, input that ends early) are returned as
// they are. It allocates in chunks of at most 1 MiB as the bytes arrive, so
// a forged length costs at most about twice the bytes actually present
// (the codec's own payloads: exactly the bin, checked against the bytes
// present).
func DecodeBulk[E Number](dec *msgpack.Decoder) ([]E, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, nil
	}
	var e E
	size := int(unsafe.Sizeof(e))
	if n%size != 0 {
		return nil, errorf(ErrDecode, nil, "%d bytes is not a whole number of %d-byte elements", n, size)
	}
	if pr, ok := dec.Buffered().(*payloadReader); ok {
		data, ok := pr.next(n)
		if !ok {
			return nil, errorf(ErrTruncated, nil, "bin announces %d bytes, %d remain", n, pr.Len())
		}
		v, err := bulkValue(data, reflect.TypeFor[[]E](), bulkShape{ok: true, size: size, group: groupOf[E]()}, pr.alias)
		if err != nil {
			return nil, err
		}
		return v.Interface().([]E), nil
	}
	out := make([]E, 0, min(n, bulkReadChunk)/size)
	for done := 0; done < n; {
		k := min(n-done, bulkReadChunk) / size
		out = append(out, make([]E, k)...)
		part := unsafe.Slice((*byte)(unsafe.Pointer(&out[done/size])), k*size)
		if err := dec.ReadFull(part); err != nil {
			return nil, err
		}
		done += k * size
	}
	if !nativeLittle && n > 0 {
		swapGroups(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n), groupOf[E]())
	}
	return out, nil
}

func groupOf[E Number]() int {
	t := reflect.TypeFor[E]()
	if k := t.Kind(); k == reflect.Complex64 || k == reflect.Complex128 {
		return int(t.Size()) / 2
	}
	return int(t.Size())
}
