package wire

import (
	"reflect"
	"unsafe"
)

// SplitValue encodes v for sending as two parts whose concatenation is
// exactly EncodeValue's payload: head is appended to dst, body follows it.
// For a non-nil value on the bulk path on a little-endian host, head is the
// msgpack bin header and body is a view of v's own memory, not a copy (v
// must not change until body has been sent); for any other value head is the
// whole payload and body is nil. Errors are as for EncodeValue.
func SplitValue[T any](dst []byte, v T) (head, body []byte, err error) {
	s := shapeOf(reflect.TypeFor[T]())
	if !s.ok || !nativeLittle {
		head, err = EncodeValue(dst, v)
		return head, nil, err
	}
	rv := reflect.ValueOf(&v).Elem()
	if rv.IsNil() {
		head, err = EncodeValue(dst, v)
		return head, nil, err
	}
	countEncode()
	n64 := int64(rv.Len()) * int64(s.size)
	if n64 > int64(^uint32(0)) || n64+int64(binHeaderLen(int(n64))) > PayloadLimit() {
		return dst, nil, errorf(ErrLength, nil, "%d-byte %s exceeds payload limit %d", n64, rv.Type(), PayloadLimit())
	}
	n := int(n64)
	if n > 0 {
		body = unsafe.Slice((*byte)(rv.UnsafePointer()), n)
	}
	return appendBinHeader(dst, n), body, nil
}

// BodyBuffer returns where to receive the body of a split payload of
// bodyLen bytes: when T takes the bulk path on a little-endian host and
// bodyLen is a whole number of its elements, a new T of that size and the
// byte view of its memory (so JoinValue needs no copy); otherwise a zero T
// and a plain byte buffer.
func BodyBuffer[T any](bodyLen int) (T, []byte) {
	var v T
	t := reflect.TypeFor[T]()
	s := shapeOf(t)
	if !s.ok || !nativeLittle || bodyLen <= 0 || bodyLen%s.size != 0 {
		return v, make([]byte, max(bodyLen, 0))
	}
	rv := reflect.MakeSlice(t, bodyLen/s.size, bodyLen/s.size)
	reflect.ValueOf(&v).Elem().Set(rv)
	return v, unsafe.Slice((*byte)(rv.UnsafePointer()), bodyLen)
}

// JoinValue decodes a payload received in two parts: head, and body
// received into the buffer BodyBuffer returned together with v. When v
// already holds the body (the bulk case) and head is exactly a bin header
// announcing len(body) bytes, v is returned without a copy; otherwise the
// parts are joined and decoded as by DecodeValue, with the same errors.
func JoinValue[T any](head []byte, v T, body []byte) (T, error) {
	if len(body) == 0 {
		return DecodeValue[T](head)
	}
	t := reflect.TypeFor[T]()
	if s := shapeOf(t); s.ok && nativeLittle {
		rv := reflect.ValueOf(&v).Elem()
		if !rv.IsNil() && rv.Len()*s.size == len(body) && unsafe.Pointer(rv.Pointer()) == unsafe.Pointer(&body[0]) {
			countDecode()
			n, hl, err := binHeader(head, t)
			switch {
			case err != nil:
				return v, err
			case hl != len(head):
				return v, errorf(ErrDecode, nil, "split %s head has %d bytes, a bin header %d", t, len(head), hl)
			case n != len(body):
				return v, errorf(ErrLength, nil, "split %s head announces %d bytes, body has %d", t, n, len(body))
			}
			return v, nil
		}
	}
	joined := make([]byte, 0, len(head)+len(body))
	return DecodeValueOwned[T](append(append(joined, head...), body...))
}
