//go:build mpirt || mpicgo

package wire

import (
	"errors"
	"io"
	"reflect"
	"time"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// The payload codec of builds with an MPI backend: bulk values by hand
// (bulk.go), everything else through msgpack.

// appendWriter is an io.Writer and io.ByteWriter appending to a byte slice.
// With segMin > 0 (EncodeItemsSegmented) a bulk value of at least segMin
// bytes leaves its data out of b: its bin header is written, and its data
// recorded in segs, to travel from the value's own memory; ext counts
// those bytes, so that the payload limit still applies to the whole.
type appendWriter struct {
	b      []byte
	segMin int
	segs   []Segment
	ext    int64
}

// external reports whether n bytes of bulk data leave the payload as a
// segment (the bytes go as they lie in memory: little-endian hosts only).
func (w *appendWriter) external(n int) bool { return w.segMin > 0 && n >= w.segMin && nativeLittle }

// addSegment records data as the segment at the current end of b.
func (w *appendWriter) addSegment(data []byte) {
	w.segs = append(w.segs, Segment{Off: len(w.b), Data: data})
	w.ext += int64(len(data))
}

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *appendWriter) WriteByte(c byte) error {
	w.b = append(w.b, c)
	return nil
}

func newEncoder(w io.Writer) *msgpack.Encoder {
	enc := msgpack.NewEncoder(w)
	enc.SetSortMapKeys(true)
	return enc
}

// encoder appends values of one type T to a payload.
type encoder[T any] struct {
	shape  bulkShape
	scalar scalarKind // a type with the hand-written path (scalar_msgpack.go)
	w      appendWriter
	enc    *msgpack.Encoder
	base   int // len(dst) when encoding began
}

func newValueEncoder[T any](dst []byte) *encoder[T] {
	return &encoder[T]{shape: shapeOf(reflect.TypeFor[T]()), scalar: scalarOf[T](), w: appendWriter{b: dst}, base: len(dst)}
}

func (e *encoder[T]) add(v T) error {
	room := PayloadLimit() - int64(len(e.w.b)-e.base) - e.w.ext
	if e.shape.ok {
		data, isNil := sliceBytes(&v, e.shape.size)
		if !appendBulkTo(&e.w, data, isNil, e.shape, room) {
			if isNil {
				return errorf(ErrLength, nil, "payload exceeds limit %d", PayloadLimit())
			}
			return errorf(ErrLength, nil, "%d-byte %s exceeds payload limit %d", len(data), typeName[T](), PayloadLimit())
		}
		return nil
	}
	if e.scalar != scalarNone {
		e.w.b = appendScalar(e.w.b, e.scalar, unsafe.Pointer(&v))
		return e.checkLimit()
	}
	if e.enc == nil {
		e.enc = newEncoder(&e.w)
	}
	var err error
	if e.shape.addr {
		// A copy of its own, so that only this path moves a value to
		// the heap.
		a := v
		err = e.enc.EncodeValue(reflect.ValueOf(&a).Elem())
	} else {
		err = e.enc.Encode(v)
	}
	if err != nil {
		return &Error{Kind: ErrEncode, Detail: "msgpack encode of " + typeName[T](), Err: err}
	}
	return e.checkLimit()
}

// checkLimit fails once the payload encoded so far exceeds PayloadLimit.
func (e *encoder[T]) checkLimit() error {
	if n := int64(len(e.w.b)-e.base) + e.w.ext; n > PayloadLimit() {
		return errorf(ErrLength, nil, "encoded payload of %d bytes exceeds limit %d", n, PayloadLimit())
	}
	return nil
}

func typeName[T any]() string { return reflect.TypeFor[T]().String() }

// encodeValue is EncodeValue without the count.
func encodeValue[T any](dst []byte, v T) ([]byte, error) {
	e := newValueEncoder[T](dst)
	if err := e.add(v); err != nil {
		return dst, err
	}
	return e.w.b, nil
}

// encodeItems is EncodeItems without the count.
func encodeItems[T any](dst []byte, items []T) ([]byte, error) {
	b, _, err := encodeItemsSeg(dst, items, 0)
	return b, err
}

// encodeItemsSeg is EncodeItemsSegmented without the count (segMin 0: no
// segments, EncodeItems).
func encodeItemsSeg[T any](dst []byte, items []T, segMin int) ([]byte, []Segment, error) {
	e := newValueEncoder[T](dst)
	e.w.segMin = segMin
	if e.shape.ok && segMin == 0 {
		// Size the payload of bulk values up front: one allocation at
		// most, however many values the batch holds.
		e.w.b = growCap(e.w.b, bulkItemsLen(items, e.shape))
	}
	for i := range items {
		if err := e.add(items[i]); err != nil {
			var we *Error
			if errors.As(err, &we) {
				we.Detail = "item " + itoa(i) + ": " + we.Detail
				if we.Kind != ErrLength {
					we.item = i + 1 // a payload too large is no one item's fault
				}
			}
			return dst, nil, err
		}
	}
	return e.w.b, e.w.segs, nil
}

// decoder reads values of one type T from a payload.
type decoder[T any] struct {
	shape bulkShape
	typ   reflect.Type
	p     []byte
	count int  // values the payload must hold (checked by validate)
	alias bool // bulk values may alias p (the caller handed p over)
	off   int  // bytes of the payload consumed (bulk path)
	segs  []Segment
	r     *payloadReader
	dec   *msgpack.Decoder
}

func newValueDecoder[T any](p []byte, count int) *decoder[T] {
	t := reflect.TypeFor[T]()
	return &decoder[T]{shape: shapeOf(t), typ: t, p: p, count: count}
}

// remaining is the number of undecoded bytes.
func (d *decoder[T]) remaining() int {
	if d.r != nil {
		return d.r.Len()
	}
	return len(d.p)
}

func (d *decoder[T]) next() (T, error) {
	var v T
	if d.shape.ok {
		rv, n, err := d.readSegment()
		if err == nil && n < 0 {
			rv, n, err = readBulk(d.p, d.typ, d.shape, d.alias)
		}
		if err != nil {
			return v, err
		}
		d.p, d.off = d.p[n:], d.off+n
		reflect.ValueOf(&v).Elem().Set(rv)
		return v, nil
	}
	if d.dec == nil {
		if err := validate(d.p, d.count); err != nil {
			return v, err
		}
		d.r = newPayloadReader(d.p)
		d.r.alias = d.alias
		d.dec = msgpack.NewDecoder(d.r)
	}
	if d.r.Len() == 0 {
		return v, errorf(ErrTruncated, nil, "missing %s value", typeName[T]())
	}
	if err := decodeMsgpack(d.dec, &v); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return v, &Error{Kind: ErrTruncated, Detail: "payload ends inside a " + typeName[T]() + " value", Err: err}
		}
		return v, &Error{Kind: ErrDecode, Detail: "msgpack decode into " + typeName[T](), Err: err}
	}
	return v, nil
}

// decodeMsgpack decodes the next value into *v. A time.Time goes through
// msgpack's registry (DecodeValue), where the codec's time decoder sits:
// msgpack's Decode would read a *time.Time with its built-in timestamp
// decoder (time_msgpack.go). msgpack v5.4.1 panics (reflect.Value.IsNil on
// a struct) when it meets a msgpack nil where a non-pointer value of an
// extension type registered with msgpack.RegisterExt is expected (found by
// FuzzDecodeValue, on time.Time before the codec had its own time
// decoder); that panic is malformed input, not user code, so it becomes
// ErrDecode. Every other panic, a custom decoder's own included, goes on
// up unchanged.
func decodeMsgpack[T any](dec *msgpack.Decoder, v *T) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if ve, ok := r.(*reflect.ValueError); ok && ve.Method == "reflect.Value.IsNil" {
				err = errorf(ErrDecode, nil, "msgpack decode into %s: nil where a %s value with its own decoder was expected", typeName[T](), ve.Kind)
				return
			}
			panic(r)
		}
	}()
	if tv, ok := any(v).(*time.Time); ok {
		return dec.DecodeValue(reflect.ValueOf(tv).Elem())
	}
	return dec.Decode(v)
}

// decodeValue is DecodeValue (alias false) and DecodeValueOwned (alias
// true) without the count.
func decodeValue[T any](payload []byte, alias bool) (T, error) {
	d := newValueDecoder[T](payload, 1)
	d.alias = alias
	v, err := d.next()
	if err != nil {
		var zero T
		return zero, err
	}
	if n := d.remaining(); n != 0 {
		var zero T
		return zero, errorf(ErrTrailing, nil, "%d bytes after the value", n)
	}
	return v, nil
}

// decodeItems is DecodeItemsOwned (alias true) without the count; with
// alias false the result never shares memory with payload.
func decodeItems[T any](payload []byte, count int, alias bool) ([]T, error) {
	return decodeItemsSeg[T](payload, count, nil, alias)
}

// decodeItemsSeg is decodeItems for a payload whose bulk data may lie in
// segs (DecodeItemsSegments; T on the bulk path).
func decodeItemsSeg[T any](payload []byte, count int, segs []Segment, alias bool) ([]T, error) {
	if count < 0 || count > len(payload) {
		return nil, errorf(ErrCount, nil, "%d items cannot be in a %d-byte payload", count, len(payload))
	}
	if k := scalarOf[T](); k != scalarNone && len(segs) == 0 {
		out := make([]T, count)
		if decodeScalars(k, payload, out) {
			return out, nil
		}
		// Anything else (an error included) is the library's to decode.
	}
	d := newValueDecoder[T](payload, count)
	d.alias, d.segs = alias, segs
	if len(segs) > 0 && !d.shape.ok {
		return nil, errorf(ErrDecode, nil, "%d segments for %s, which is not on the bulk path", len(segs), typeName[T]())
	}
	if !d.shape.ok {
		// The structure of the whole payload first: a failure here is
		// the frame's, not one item's (ItemPosition says false).
		if err := validate(d.p, count); err != nil {
			return nil, err
		}
		d.r = newPayloadReader(d.p)
		d.r.alias = alias
		d.dec = msgpack.NewDecoder(d.r)
	}
	out := make([]T, 0, count)
	for i := 0; i < count; i++ {
		v, err := d.next()
		if err != nil {
			var we *Error
			if errors.As(err, &we) {
				we.Detail = "item " + itoa(i) + ": " + we.Detail
				we.item = i + 1
			}
			return nil, err
		}
		out = append(out, v)
	}
	if n := d.remaining(); n != 0 {
		return nil, errorf(ErrTrailing, nil, "%d bytes after %d items", n, count)
	}
	if len(d.segs) != 0 {
		return nil, errorf(ErrTrailing, nil, "%d segments after %d items", len(d.segs), count)
	}
	return out, nil
}

// readSegment decodes the next bulk value from the decoder's next segment
// when its data is that segment (its bin header ends where the segment
// belongs); n < 0 when it is not, the value then lies in the payload.
func (d *decoder[T]) readSegment() (reflect.Value, int, error) {
	if len(d.segs) == 0 {
		return reflect.Value{}, -1, nil
	}
	n, hl, err := binHeader(d.p, d.typ)
	if err != nil || n < 0 || d.segs[0].Off != d.off+hl {
		return reflect.Value{}, -1, nil // readBulk reports what is wrong
	}
	data := d.segs[0].Data
	if len(data) != n {
		return reflect.Value{}, 0, errorf(ErrDecode, nil, "bin announces %d bytes, its segment holds %d", n, len(data))
	}
	d.segs = d.segs[1:]
	rv, err := bulkValue(data, d.typ, d.shape, d.alias)
	return rv, hl, err
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b [20]byte
	p := len(b)
	neg := i < 0
	u := uint64(i)
	if neg {
		u = uint64(-i)
	}
	for u > 0 {
		p--
		b[p] = byte('0' + u%10)
		u /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
