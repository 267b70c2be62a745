//go:build mpirt || mpicgo

package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// time.Time on the wire keeps its zone.
//
// msgpack's built-in time extension (ext type -1) carries the instant
// only and decodes it in time.Local, so a value that crossed ranks would
// differ from one the root kept (the root's own results are never
// encoded). Hataori's encoder therefore writes a time.Time as an
// extension of its own, zonedTimeExt, whose payload is
//
//	form    1 byte: formUTC, formLocal or formZone
//	sec     8 bytes, little-endian int64: t.Unix()
//	nsec    4 bytes, little-endian uint32: t.Nanosecond(), below 1e9
//	// formLocal and formZone only:
//	offset  signed varint: the offset of t.Zone(), seconds east of UTC
//	abbrLen uvarint, then abbrLen bytes: the name of t.Zone() ("IST")
//	// formZone only, the rest of the payload:
//	locName t.Location().String() ("Asia/Kolkata"); empty when it
//	        equals the zone name (a time.FixedZone)
//
// and its decoder rebuilds the location (resolveZone). The monotonic clock
// reading is not sent: it means nothing in another process.
//
// msgpack offers no per-encoder type hooks (its registry is process-wide),
// so the coder is registered in msgpack's registry for time.Time and
// serves every encoder and decoder: for Hataori's own (recognised by their
// writer and reader, appendWriter and payloadReader) it uses the format
// above; for every other one it does what msgpack's built-in extension
// does, byte for byte on encoding, so the program's own msgpack use is
// unchanged (except that a msgpack nil where a time.Time value is expected
// is an error instead of msgpack's panic). TestForeignTimeUnchanged pins
// that.

// zonedTimeExt is the msgpack extension type of a time.Time written by
// Hataori's encoder.
const zonedTimeExt int8 = 'Z'

// msgpackTimeExt is the extension type of msgpack's own timestamp.
const msgpackTimeExt int8 = -1

// The forms of a zoned time.
const (
	formUTC   = 0 // time.UTC
	formLocal = 1 // the sender's time.Local
	formZone  = 2 // any other location
)

// zonedHead is the size of form, sec and nsec.
const zonedHead = 1 + 8 + 4

func init() {
	msgpack.Register(time.Time{}, encodeTime, decodeTime)
}

// timeAt reads the time.Time v holds, without boxing it when v is
// addressable.
func timeAt(v reflect.Value) time.Time {
	if v.CanAddr() {
		return *v.Addr().Interface().(*time.Time)
	}
	return v.Interface().(time.Time)
}

// encodeTime is msgpack's encoder of time.Time values.
func encodeTime(e *msgpack.Encoder, v reflect.Value) error {
	t := timeAt(v)
	w, ours := e.Writer().(*appendWriter)
	if !ours {
		return e.EncodeTime(t) // msgpack's built-in extension, as before
	}
	name, offset := t.Zone()
	loc := t.Location()
	form := formZone
	switch loc {
	case time.UTC:
		form = formUTC
	case time.Local:
		form = formLocal
	}
	n := zonedHead
	var locName string
	if form != formUTC {
		n += varintLen(int64(offset)) + uvarintLen(uint64(len(name))) + len(name)
	}
	if form == formZone {
		if locName = loc.String(); locName == name {
			locName = ""
		}
		n += len(locName)
	}
	if err := e.EncodeExtHeader(zonedTimeExt, n); err != nil {
		return err
	}
	b := append(w.b, byte(form))
	b = binary.LittleEndian.AppendUint64(b, uint64(t.Unix()))
	b = binary.LittleEndian.AppendUint32(b, uint32(t.Nanosecond()))
	if form != formUTC {
		b = binary.AppendVarint(b, int64(offset))
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = append(b, locName...)
	}
	w.b = b
	return nil
}

func varintLen(x int64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutVarint(buf[:], x)
}

func uvarintLen(x uint64) int {
	var buf [binary.MaxVarintLen64]byte
	return binary.PutUvarint(buf[:], x)
}

// decodeTime is msgpack's decoder of time.Time values.
func decodeTime(d *msgpack.Decoder, v reflect.Value) error {
	if !v.CanAddr() {
		return fmt.Errorf("msgpack: DecodeExt(nonaddressable %s)", v.Type())
	}
	id, n, err := d.DecodeExtHeader()
	if err != nil {
		return err
	}
	r, ours := d.Buffered().(*payloadReader)
	var t time.Time
	switch {
	case id == msgpackTimeExt:
		t, err = readTimestamp(d, n)
	case !ours:
		err = fmt.Errorf("msgpack: got ext type=%d, wanted %d", id, msgpackTimeExt) // msgpack's own words
	case id != zonedTimeExt:
		err = errorf(ErrDecode, nil, "time.Time: msgpack extension type %d, want %d", id, zonedTimeExt)
	default:
		t, err = readZoned(r, n)
	}
	if err != nil {
		return err
	}
	*v.Addr().Interface().(*time.Time) = t
	return nil
}

// readTimestamp reads the n bytes of msgpack's own timestamp extension, as
// msgpack's decoder does: the instant in time.Local, the zero time in UTC.
func readTimestamp(d *msgpack.Decoder, n int) (time.Time, error) {
	if n != 4 && n != 8 && n != 12 {
		return time.Time{}, fmt.Errorf("msgpack: invalid ext len=%d decoding time", n)
	}
	var buf [12]byte
	b := buf[:n]
	if br, ok := d.Buffered().(io.ByteReader); ok {
		// Byte by byte, so that buf stays on the stack (ReadFull's
		// interface call would move it to the heap).
		for i := range b {
			c, err := br.ReadByte()
			if err != nil {
				return time.Time{}, unexpectedEOF(err)
			}
			b[i] = c
		}
	} else if err := d.ReadFull(b); err != nil {
		return time.Time{}, err
	}
	var t time.Time
	switch n {
	case 4:
		t = time.Unix(int64(binary.BigEndian.Uint32(b)), 0)
	case 8:
		x := binary.BigEndian.Uint64(b)
		t = time.Unix(int64(x&0x3_ffff_ffff), int64(x>>34))
	default:
		t = time.Unix(int64(binary.BigEndian.Uint64(b[4:])), int64(binary.BigEndian.Uint32(b)))
	}
	if t.IsZero() {
		return t.UTC(), nil
	}
	return t, nil
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readZoned reads the n-byte payload of a zonedTimeExt from r. Every
// malformed payload is an ErrDecode (ErrTruncated when r ends early).
func readZoned(r *payloadReader, n int) (time.Time, error) {
	b, ok := r.next(n)
	if !ok {
		return time.Time{}, errorf(ErrTruncated, nil, "time.Time: %d-byte value, %d bytes remain", n, r.Len())
	}
	bad := func(format string, args ...any) (time.Time, error) {
		return time.Time{}, errorf(ErrDecode, nil, "time.Time: "+format, args...)
	}
	if n < zonedHead {
		return bad("%d-byte value, want at least %d", n, zonedHead)
	}
	form := b[0]
	nsec := binary.LittleEndian.Uint32(b[9:])
	if nsec >= 1e9 {
		return bad("%d nanoseconds", nsec)
	}
	t := time.Unix(int64(binary.LittleEndian.Uint64(b[1:])), int64(nsec))
	if form == formUTC {
		if n != zonedHead {
			return bad("%d bytes after a UTC time", n-zonedHead)
		}
		return t.UTC(), nil
	}
	if form != formLocal && form != formZone {
		return bad("unknown form %d", form)
	}
	offset, k := binary.Varint(b[zonedHead:])
	if k <= 0 || int64(int(offset)) != offset {
		return bad("malformed zone offset")
	}
	at := zonedHead + k
	nameLen, k := binary.Uvarint(b[at:])
	if k <= 0 || nameLen > uint64(n-at-k) {
		return bad("malformed zone name length")
	}
	at += k
	nameEnd := at + int(nameLen)
	name, locName := b[at:nameEnd], b[nameEnd:]
	if form == formLocal && len(locName) != 0 {
		return bad("%d bytes after a local time", len(locName))
	}
	// The fixed-zone cache key: offset and name as they were sent.
	key := b[zonedHead:nameEnd]
	return t.In(resolveZone(t, form, int(offset), name, locName, key)), nil
}

// payloadReader is the reader of Hataori's msgpack decoders: a byte
// reader over the payload (an io.ByteScanner, so msgpack reads it
// without buffering of its own) whose type tells decodeTime that the
// decoder is Hataori's, and whose next returns the next bytes without a
// copy.
type payloadReader struct {
	p     []byte
	i     int
	alias bool // bulk values may alias p (DecodeBulk; the caller handed p over)
}

func newPayloadReader(p []byte) *payloadReader { return &payloadReader{p: p} }

// Len is the number of unread bytes.
func (r *payloadReader) Len() int { return len(r.p) - r.i }

func (r *payloadReader) Read(b []byte) (int, error) {
	if r.i >= len(r.p) {
		if len(b) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := copy(b, r.p[r.i:])
	r.i += n
	return n, nil
}

func (r *payloadReader) ReadByte() (byte, error) {
	if r.i >= len(r.p) {
		return 0, io.EOF
	}
	c := r.p[r.i]
	r.i++
	return c, nil
}

func (r *payloadReader) UnreadByte() error {
	if r.i <= 0 {
		return errorf(ErrDecode, nil, "UnreadByte at the start of the payload")
	}
	r.i--
	return nil
}

// next returns the next n bytes (a view of the payload) and consumes
// them, or false when fewer remain.
func (r *payloadReader) next(n int) ([]byte, bool) {
	if n < 0 || n > r.Len() {
		return nil, false
	}
	b := r.p[r.i : r.i+n : r.i+n]
	r.i += n
	return b, true
}

// zoneCacheMax bounds each of the zone caches; past it a location is
// still resolved, only not remembered.
const zoneCacheMax = 1024

// zoneCache remembers the locations decoding resolved, so that repeated
// values neither reload a zone from the tz database nor allocate a fixed
// zone each.
var zoneCache struct {
	sync.RWMutex
	loaded map[string]*time.Location // time.LoadLocation by name; nil: none usable
	fixed  map[string]*time.Location // time.FixedZone by the sent offset and name bytes
}

// resolveZone returns the location a decoded time t (an instant) takes:
//
//   - formLocal: the receiver's time.Local when it gives, at t, the zone
//     name and offset the sender's did, else a fixed zone of that name
//     and offset;
//   - formZone: time.LoadLocation(locName) (locName empty: the zone name)
//     when the receiver's tz database has it and it gives, at t, the
//     sent zone name and offset, else a fixed zone of that name and
//     offset.
//
// So Zone() always comes back as it was sent, and Location().String()
// too unless the receiver's zone differs from the sender's (another tz
// database version, another time.Local): the fixed zone is then named
// after the zone name ("IST"), not the location ("Asia/Kolkata").
func resolveZone(t time.Time, form byte, offset int, name, locName, key []byte) *time.Location {
	var loc *time.Location
	if form == formLocal {
		loc = time.Local
	} else {
		if len(locName) == 0 {
			locName = name
		}
		loc = loadZone(locName)
	}
	if loc != nil {
		if n, o := t.In(loc).Zone(); o == offset && n == string(name) {
			return loc
		}
	}
	zoneCache.RLock()
	fixed := zoneCache.fixed[string(key)]
	zoneCache.RUnlock()
	if fixed != nil {
		return fixed
	}
	fixed = time.FixedZone(string(name), offset)
	zoneCache.Lock()
	if zoneCache.fixed == nil {
		zoneCache.fixed = map[string]*time.Location{}
	}
	if len(zoneCache.fixed) < zoneCacheMax {
		zoneCache.fixed[string(key)] = fixed
	}
	zoneCache.Unlock()
	return fixed
}

// loadZone is time.LoadLocation(name), cached, for names spelt as tz
// database names are (letters, digits, "/", "_", "-", "+", at most 255
// bytes); nil when there is no such zone. Names spelt otherwise are not
// looked up (a fixed zone's own name such as "UTC+5:30", or bytes that
// were never a zone name).
func loadZone(name []byte) *time.Location {
	if !zoneName(name) {
		return nil
	}
	zoneCache.RLock()
	loc, known := zoneCache.loaded[string(name)]
	zoneCache.RUnlock()
	if known {
		return loc
	}
	s := string(name)
	loc, err := time.LoadLocation(s)
	if err != nil {
		loc = nil
	}
	zoneCache.Lock()
	if zoneCache.loaded == nil {
		zoneCache.loaded = map[string]*time.Location{}
	}
	if len(zoneCache.loaded) < zoneCacheMax {
		zoneCache.loaded[s] = loc
	}
	zoneCache.Unlock()
	return loc
}

func zoneName(b []byte) bool {
	if len(b) == 0 || len(b) > 255 || b[0] == '/' {
		return false
	}
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '/', c == '_', c == '-', c == '+':
		default:
			return false
		}
	}
	return true
}
