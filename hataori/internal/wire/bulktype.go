package wire

import (
	"reflect"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// Number is the set of fixed-size number types a Bulk slice may hold.
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 |
		~int | ~uint | ~float32 | ~float64 | ~complex64 | ~complex128
}

// Bulk is a numeric slice that msgpack encodes as one bin value holding its
// little-endian bytes instead of element by element. Use it for numeric
// slices inside structs that cross ranks; a top-level numeric slice value
// takes the bulk path without it. A nil Bulk encodes as msgpack nil and an
// empty one as an empty bin, so nil and empty stay distinct.
type Bulk[E Number] []E

// bulkReadChunk bounds each allocation while decoding a Bulk, so a forged
// length never allocates more than about twice the bytes actually present.
const bulkReadChunk = 1 << 20

// EncodeMsgpack implements msgpack.CustomEncoder.
func (b Bulk[E]) EncodeMsgpack(enc *msgpack.Encoder) error {
	if b == nil {
		return enc.EncodeNil()
	}
	var e E
	size := int(unsafe.Sizeof(e))
	n := len(b) * size
	if int64(n) > int64(^uint32(0)) {
		return errorf(ErrLength, nil, "%d-byte Bulk exceeds the msgpack bin limit", n)
	}
	// Never nil: msgpack's EncodeBytes writes a nil slice as msgpack nil,
	// which would turn an empty Bulk into a nil one on the receiver.
	raw := []byte{}
	if n > 0 {
		raw = unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), n)
	}
	if nativeLittle {
		return enc.EncodeBytes(raw)
	}
	swapped := append([]byte{}, raw...)
	swapGroups(swapped, groupOf[E]())
	return enc.EncodeBytes(swapped)
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (b *Bulk[E]) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeBytesLen()
	if err != nil {
		return err
	}
	if n < 0 {
		*b = nil
		return nil
	}
	var e E
	size := int(unsafe.Sizeof(e))
	if n%size != 0 {
		return errorf(ErrDecode, nil, "%d bytes is not a whole number of %d-byte elements", n, size)
	}
	out := make(Bulk[E], 0, min(n, bulkReadChunk)/size)
	for done := 0; done < n; {
		k := min(n-done, bulkReadChunk) / size
		out = append(out, make([]E, k)...)
		part := unsafe.Slice((*byte)(unsafe.Pointer(&out[done/size])), k*size)
		if err := dec.ReadFull(part); err != nil {
			return err
		}
		done += k * size
	}
	if !nativeLittle && n > 0 {
		swapGroups(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n), groupOf[E]())
	}
	*b = out
	return nil
}

func groupOf[E Number]() int {
	t := reflect.TypeFor[E]()
	if k := t.Kind(); k == reflect.Complex64 || k == reflect.Complex128 {
		return int(t.Size()) / 2
	}
	return int(t.Size())
}
