//go:build mpirt || mpicgo

package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// sameTime reports whether b is a as the codec promises to carry it: the
// same instant, Zone() name and offset, and Location().String().
func sameTime(a, b time.Time) bool {
	an, ao := a.Zone()
	bn, bo := b.Zone()
	return a.Equal(b) && an == bn && ao == bo && a.Location().String() == b.Location().String()
}

func describe(t time.Time) string {
	n, o := t.Zone()
	return fmt.Sprintf("%s (zone %q %d, location %q)", t.Format(time.RFC3339Nano), n, o, t.Location())
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no tz database entry %s (install tzdata): %v", name, err)
	}
	return l
}

// testTimes covers UTC, Local, tz-database zones (America/New_York on
// both sides of both of its 2024 DST changes, the repeated hour included),
// fixed zones with and without a name (one called "UTC"), the zero time
// (alone and in a zone), instants before 1970 and far from it, and the
// last nanosecond of a second.
func testTimes(t *testing.T) []time.Time {
	kolkata, ny := mustLoad(t, "Asia/Kolkata"), mustLoad(t, "America/New_York")
	named, unnamed := time.FixedZone("UTC+5:30", 19800), time.FixedZone("", -3600)
	return []time.Time{
		time.Date(2024, 2, 29, 12, 30, 0, 123456789, time.UTC),
		time.Date(2024, 2, 29, 12, 30, 0, 123456789, time.Local),
		time.Date(2024, 2, 29, 12, 30, 0, 5, named),
		time.Date(2024, 2, 29, 12, 30, 0, 5, unnamed),
		time.Date(2024, 2, 29, 12, 30, 0, 5, time.FixedZone("UTC", 0)),
		time.Date(2024, 2, 29, 12, 30, 0, 5, time.FixedZone("odd name, with spaces/and:colons", 3600*13+45*60)),
		time.Date(2024, 2, 29, 12, 30, 0, 0, kolkata),
		time.Date(2024, 3, 10, 6, 59, 59, 999999999, time.UTC).In(ny), // EST, just before spring forward
		time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC).In(ny),           // EDT
		time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC).In(ny),          // 01:30 EDT
		time.Date(2024, 11, 3, 6, 30, 0, 0, time.UTC).In(ny),          // 01:30 EST, the repeated hour
		{},
		time.Time{}.In(named),
		time.Unix(-1, 1).UTC(),
		time.Date(1, 1, 1, 0, 0, 0, 1, kolkata),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, unnamed),
		time.Unix(1<<40, 0).In(ny),
	}
}

// timeHolder holds times every way a value can.
type timeHolder struct {
	At    time.Time
	Ptr   *time.Time
	Nil   *time.Time
	PP    **time.Time
	List  []time.Time
	Arr   [2]time.Time
	ByKey map[string]time.Time
	Ptrs  map[int]*time.Time
	Inner struct{ When []*time.Time }
}

func holderOf(ts []time.Time, i int) timeHolder {
	at := func(k int) time.Time { return ts[(i+k)%len(ts)] }
	p, q, r := at(1), at(2), at(3)
	pp := &q
	h := timeHolder{At: at(0), Ptr: &p, PP: &pp, List: ts, Arr: [2]time.Time{at(4), at(5)},
		ByKey: map[string]time.Time{"a": at(6), "b": at(7)}, Ptrs: map[int]*time.Time{1: &r, 2: nil}}
	h.Inner.When = []*time.Time{nil, &r}
	return h
}

// TestTimeRoundTrip: a time.Time keeps its instant, zone name and offset
// and location name across the codec, at the top level, as items, and
// nested in structs, pointers, slices, arrays and maps. UTC and Local
// come back as time.UTC and time.Local themselves (so == holds once the
// monotonic clock reading is stripped).
func TestTimeRoundTrip(t *testing.T) {
	ts := append(testTimes(t), time.Now(), time.Now().UTC())
	for _, in := range ts {
		b, err := EncodeValue(nil, in)
		if err != nil {
			t.Fatalf("%s: %v", describe(in), err)
		}
		out, err := DecodeValue[time.Time](b)
		if err != nil || !sameTime(in, out) {
			t.Errorf("%s came back as %s, %v (% x)", describe(in), describe(out), err, b)
			continue
		}
		if l := in.Location(); (l == time.UTC || l == time.Local) && out != in.Round(0) {
			t.Errorf("%s came back as %#v, want == %#v", describe(in), out, in.Round(0))
		}
		p, err := EncodeValue(nil, &in)
		if err != nil {
			t.Fatal(err)
		}
		if po, err := DecodeValue[*time.Time](p); err != nil || po == nil || !sameTime(in, *po) {
			t.Errorf("*time.Time %s came back as %v, %v", describe(in), po, err)
		}
	}
	b, err := EncodeItems(nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	items, err := DecodeItemsOwned[time.Time](b, len(ts))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ts {
		if !sameTime(ts[i], items[i]) {
			t.Errorf("item %d: %s came back as %s", i, describe(ts[i]), describe(items[i]))
		}
	}
	for i := range ts {
		in := holderOf(ts, i)
		b, err := EncodeValue(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DecodeValue[timeHolder](b)
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(reflect.ValueOf(in), reflect.ValueOf(out)) || out.Nil != nil || out.Ptrs[2] != nil {
			t.Errorf("holder %d: %+v came back as %+v", i, in, out)
		}
	}
}

// TestTimeMonotonicDropped: the monotonic clock reading does not cross
// (it means nothing in another process): a decoded time.Now() is
// time.Now().Round(0).
func TestTimeMonotonicDropped(t *testing.T) {
	now := time.Now()
	if !strings.Contains(now.String(), "m=") {
		t.Skip("no monotonic clock reading on this platform")
	}
	b, err := EncodeValue(nil, now)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeValue[time.Time](b)
	if err != nil || out != now.Round(0) || out == now || strings.Contains(out.String(), "m=") {
		t.Errorf("time.Now() %v came back as %v, %v; want %v", now, out, err, now.Round(0))
	}
}

// withLocal runs f with time.Local set to loc.
func withLocal(loc *time.Location, f func()) {
	saved := time.Local
	time.Local = loc
	defer func() { time.Local = saved }()
	f()
}

// TestTimeZoneResolution: how a receiver rebuilds a location it does not
// share with the sender. A sender's Local comes back as the receiver's
// Local when that gives the same zone at that instant, otherwise as a
// fixed zone of the sent name and offset; a tz-database zone the receiver
// lacks, or whose zone at that instant differs, comes back as such a fixed
// zone too. Resolved zones are cached: repeated values share one
// *time.Location.
func TestTimeZoneResolution(t *testing.T) {
	ny, ny2 := mustLoad(t, "America/New_York"), mustLoad(t, "America/New_York")
	kolkata := mustLoad(t, "Asia/Kolkata")
	winter := time.Date(2024, 1, 15, 12, 0, 0, 0, time.UTC)
	var b []byte
	withLocal(ny, func() {
		var err error
		if b, err = EncodeValue(nil, winter.In(time.Local)); err != nil {
			t.Fatal(err)
		}
	})
	withLocal(ny2, func() { // the same zone, another *Location: Local it is
		out, err := DecodeValue[time.Time](b)
		if err != nil || out.Location() != time.Local || !sameTime(winter.In(ny), out) {
			t.Errorf("Local (New York) into Local (New York) = %s, %v; want time.Local", describe(out), err)
		}
	})
	withLocal(kolkata, func() { // another zone: the sender's zone, fixed
		out, err := DecodeValue[time.Time](b)
		if n, o := out.Zone(); err != nil || n != "EST" || o != -18000 || out.Location().String() != "EST" || !out.Equal(winter) {
			t.Errorf("Local (New York) into Local (Kolkata) = %s, %v; want a fixed EST zone", describe(out), err)
		}
	})

	// A zone the receiver does not have, and one whose offset differs.
	for _, c := range []struct{ loc, name string }{{"Nowhere/Atlantis", "ATL"}, {"Asia/Kolkata", "XST"}} {
		p := zonedPayload(formZone, winter.Unix(), 7, 3600, c.name, c.loc)
		out, err := DecodeValue[time.Time](p)
		if n, o := out.Zone(); err != nil || n != c.name || o != 3600 || out.Location().String() != c.name || !out.Equal(winter.Add(7)) {
			t.Errorf("%s/%s = %s, %v; want a fixed zone %s +3600", c.loc, c.name, describe(out), err, c.name)
		}
	}

	// The cache: one location per zone, whatever the instant.
	fixed := time.FixedZone("F", 7200)
	var locs []*time.Location
	for _, in := range []time.Time{winter.In(fixed), winter.Add(time.Hour).In(fixed), winter.In(ny), winter.Add(time.Hour).In(ny)} {
		b, err := EncodeValue(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := DecodeValue[time.Time](b)
		if err != nil || !sameTime(in, out) {
			t.Fatalf("%s came back as %s, %v", describe(in), describe(out), err)
		}
		locs = append(locs, out.Location())
	}
	if locs[0] != locs[1] || locs[2] != locs[3] || locs[0] == fixed || locs[2] == ny {
		t.Errorf("decoded locations %p %p %p %p: want one per zone, the decoder's own", locs[0], locs[1], locs[2], locs[3])
	}
	// A cached zone costs no allocation over a UTC time (the decoder's
	// own).
	allocs := func(in time.Time) float64 {
		b, _ := EncodeValue(nil, in)
		return testing.AllocsPerRun(100, func() { _, _ = DecodeValue[time.Time](b) })
	}
	base := allocs(winter)
	for _, in := range []time.Time{winter.In(fixed), winter.In(ny), winter.In(time.Local)} {
		if n := allocs(in); n > base {
			t.Errorf("decoding %s allocates %v times, a UTC time %v", describe(in), n, base)
		}
	}
}

// zonedPayload is the codec's encoding of a time given by its parts.
func zonedPayload(form byte, sec int64, nsec uint32, offset int64, name, loc string) []byte {
	p := []byte{form}
	p = binary.LittleEndian.AppendUint64(p, uint64(sec))
	p = binary.LittleEndian.AppendUint32(p, nsec)
	if form != formUTC {
		p = binary.AppendVarint(p, offset)
		p = binary.AppendUvarint(p, uint64(len(name)))
		p = append(p, name...)
		p = append(p, loc...)
	}
	return extValue(zonedTimeExt, p)
}

// extValue is a msgpack ext value (ext 8 or ext 32) of type id.
func extValue(id int8, p []byte) []byte {
	if len(p) <= 0xff {
		return append([]byte{0xc7, byte(len(p)), byte(id)}, p...)
	}
	return append(binary.BigEndian.AppendUint32([]byte{0xc9}, uint32(len(p))), append([]byte{byte(id)}, p...)...)
}

// TestTimeDecodeMalformed: every malformed time encoding is a typed
// decode error (never a panic), at the top level and inside a struct.
func TestTimeDecodeMalformed(t *testing.T) {
	good := zonedPayload(formZone, 1e9, 5, 19800, "IST", "Asia/Kolkata")
	head := func(form byte, nsec uint32) []byte {
		p := []byte{form}
		p = binary.LittleEndian.AppendUint64(p, 1e9)
		return binary.LittleEndian.AppendUint32(p, nsec)
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"nil", []byte{codeNil}},
		{"a string", []byte{0xa3, 'n', 'o', 'w'}},
		{"an int", []byte{0x05}},
		{"another ext type", extValue(3, head(formUTC, 0))},
		{"ext 13 (msgpack accepts it only outside a typed decode)", extValue(13, []byte{0, 0, 0, 1})},
		{"msgpack timestamp of 5 bytes", extValue(msgpackTimeExt, []byte{0, 0, 0, 0, 1})},
		{"empty", extValue(zonedTimeExt, nil)},
		{"short head", extValue(zonedTimeExt, head(formUTC, 0)[:12])},
		{"unknown form", extValue(zonedTimeExt, head(7, 0))},
		{"nanoseconds 1e9", extValue(zonedTimeExt, head(formUTC, 1e9))},
		{"nanoseconds max", extValue(zonedTimeExt, head(formLocal, ^uint32(0)))},
		{"UTC with trailing bytes", extValue(zonedTimeExt, append(head(formUTC, 0), 1))},
		{"local without offset", extValue(zonedTimeExt, head(formLocal, 0))},
		{"offset varint never ends", extValue(zonedTimeExt, append(head(formZone, 0), bytes.Repeat([]byte{0x80}, 11)...))},
		{"offset varint cut", extValue(zonedTimeExt, append(head(formZone, 0), 0x80))},
		{"no name length", extValue(zonedTimeExt, append(head(formZone, 0), 2))},
		{"name longer than the value", extValue(zonedTimeExt, append(head(formZone, 0), 2, 9, 'a'))},
		{"name length overflows", extValue(zonedTimeExt, append(append(head(formZone, 0), 2), bytes.Repeat([]byte{0xff}, 9)...))},
		{"local with a location name", extValue(zonedTimeExt, append(head(formLocal, 0), 2, 1, 'a', 'b'))},
		{"ext header cut", good[:2]},
		{"value cut", good[:len(good)-1]},
	}
	for _, c := range cases {
		if _, err := DecodeValue[time.Time](c.data); !isKind(err, ErrDecode) && !isKind(err, ErrTruncated) {
			t.Errorf("%s (% x): %v, want ErrDecode or ErrTruncated", c.name, c.data, err)
		}
		field := append([]byte{0x81, 0xa2, 'A', 't'}, c.data...)
		if _, err := DecodeValue[timeHolder](field); !isKind(err, ErrDecode) && !isKind(err, ErrTruncated) {
			t.Errorf("%s in a field (% x): %v, want ErrDecode or ErrTruncated", c.name, field, err)
		}
	}
	if v, err := DecodeValue[time.Time](good); err != nil || v.Location().String() != "Asia/Kolkata" {
		t.Errorf("the well-formed value = %s, %v", describe(v), err)
	}
	// msgpack's own timestamp (what a custom encoder's enc.EncodeTime
	// writes) is read as msgpack reads it: the instant, in time.Local.
	ts, _ := msgpack.Marshal(time.Unix(1e9, 5))
	if v, err := DecodeValue[time.Time](ts); err != nil || !v.Equal(time.Unix(1e9, 5)) || v.Location() != time.Local {
		t.Errorf("msgpack timestamp = %s, %v", describe(v), err)
	}
}

// TestForeignTimeUnchanged: the codec's time coder sits in msgpack's
// process-wide registry, but every encoder and decoder other than the
// codec's own still reads and writes msgpack's timestamp extension
// exactly as msgpack's built-in coder does (here: as msgpack's own
// EncodeTime/DecodeTime, which the registry never reaches), so the
// program's own msgpack use is unaffected; only the codec writes the
// zoned form.
func TestForeignTimeUnchanged(t *testing.T) {
	type rec struct{ T time.Time }
	for _, in := range testTimes(t) {
		direct, err := msgpack.Marshal(in) // Encoder.Encode's own path: EncodeTime
		if err != nil {
			t.Fatal(err)
		}
		viaPtr, err := msgpack.Marshal(&in) // the registry
		if err != nil {
			t.Fatal(err)
		}
		inStruct, err := msgpack.Marshal(rec{in})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(viaPtr, direct) || !bytes.Equal(inStruct, append([]byte{0x81, 0xa1, 'T'}, direct...)) {
			t.Errorf("%s: msgpack writes % x through its registry, % x in a struct; its EncodeTime % x", describe(in), viaPtr, inStruct, direct)
		}
		var want time.Time
		if err := msgpack.Unmarshal(direct, &want); err != nil { // DecodeTime
			t.Fatal(err)
		}
		var got rec
		if err := msgpack.Unmarshal(inStruct, &got); err != nil || got.T != want || !got.T.Equal(in) {
			t.Errorf("%s: msgpack decodes %v (%v) through its registry, %v through DecodeTime", describe(in), got.T, err, want)
		}
		if want.Location() != time.Local && !in.IsZero() {
			t.Errorf("%s: msgpack's own decoding = %s, want time.Local", describe(in), describe(want))
		}
		ours, err := EncodeValue(nil, in)
		if err != nil || bytes.Equal(ours, direct) {
			t.Errorf("%s: the codec writes % x (%v), msgpack % x: want the zoned form", describe(in), ours, err, direct)
		}
	}
	// Where msgpack's registered decoder refused, so does this one (with
	// msgpack's words); a nil is an error, where msgpack panicked.
	var got rec
	err := msgpack.Unmarshal(append([]byte{0x81, 0xa1, 'T'}, extValue(13, []byte{0, 0, 0, 1})...), &got)
	if err == nil || !strings.Contains(err.Error(), "msgpack: got ext type=13, wanted -1") {
		t.Errorf("ext 13 into a time.Time field: %v, want msgpack's error", err)
	}
	err = msgpack.Unmarshal(append([]byte{0x81, 0xa1, 'T'}, zonedPayload(formUTC, 1, 0, 0, "", "")...), &got)
	if err == nil {
		t.Errorf("the codec's zoned form outside the codec decoded to %v, want msgpack's error", got.T)
	}
	if err := msgpack.Unmarshal([]byte{0x81, 0xa1, 'T', codeNil}, &got); err == nil {
		t.Error("nil into a time.Time field: no error")
	}
}

// Types that embed time.Time and nothing else get time.Time's promoted
// MarshalBinary, which msgpack calls instead of the codec's time coder:
// the type check refuses them, unless the type has methods of its own.
type (
	embedsTime    struct{ time.Time }
	embedsTimePtr struct{ *time.Time }
	embedsStamp   struct{ embedsTime }
	ownTime       struct{ time.Time }
)

func (o ownTime) EncodeMsgpack(enc *msgpack.Encoder) error {
	return enc.EncodeValue(reflect.ValueOf(o.Time))
}

func (o *ownTime) DecodeMsgpack(dec *msgpack.Decoder) error {
	return dec.DecodeValue(reflect.ValueOf(&o.Time).Elem())
}

func TestTimeTypeCheck(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[time.Time](), reflect.TypeFor[*time.Time](), reflect.TypeFor[[]time.Time](),
		reflect.TypeFor[map[string]time.Time](), reflect.TypeFor[map[time.Time]int](), reflect.TypeFor[timeHolder](),
		reflect.TypeFor[ownTime]()} {
		if err := CheckType(typ); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[embedsTime](), "field Time embeds time.Time, so msgpack encodes wire.embedsTime with the MarshalBinary method of time.Time"},
		{reflect.TypeFor[embedsTimePtr](), "field Time embeds time.Time"},
		{reflect.TypeFor[embedsStamp](), "field embedsTime embeds time.Time"},
		{reflect.TypeFor[[]embedsTime](), "field [i].Time embeds time.Time"},
	} {
		err := CheckType(c.typ)
		if !errors.Is(err, ErrUnsupportedType) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.typ, err, c.want)
		}
	}
	// What the check prevents: the zone name is lost on that path.
	in := embedsTime{time.Date(2024, 2, 29, 1, 2, 3, 0, time.FixedZone("UTC+5:30", 19800))}
	b, err := EncodeValue(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := DecodeValue[embedsTime](b); err != nil || sameTime(in.Time, out.Time) {
		t.Errorf("embedsTime came back as %s, %v: the check refuses a type that survives", describe(out.Time), err)
	}
	// A type with its own methods that use the encoder's value path
	// keeps the zone.
	own := ownTime(in)
	if b, err = EncodeValue(nil, own); err != nil {
		t.Fatal(err)
	}
	if out, err := DecodeValue[ownTime](b); err != nil || !sameTime(own.Time, out.Time) {
		t.Errorf("ownTime came back as %s, %v", describe(out.Time), err)
	}
}

// Custom coders that write a time.Time themselves, three ways.
type (
	// msgpack's timestamp both ways: the instant, in time.Local.
	plainTime struct{ T time.Time }
	// The registry both ways (a pointer): the zone crosses.
	ptrTime struct{ T time.Time }
	// The registry one way, msgpack's DecodeTime the other: fails.
	mixedTime struct{ T time.Time }
)

func (p plainTime) EncodeMsgpack(enc *msgpack.Encoder) error  { return enc.Encode(p.T) }
func (p *plainTime) DecodeMsgpack(dec *msgpack.Decoder) error { return dec.Decode(&p.T) }
func (p ptrTime) EncodeMsgpack(enc *msgpack.Encoder) error    { return enc.Encode(&p.T) }
func (p *ptrTime) DecodeMsgpack(dec *msgpack.Decoder) error {
	q := &p.T
	return dec.Decode(&q)
}
func (p mixedTime) EncodeMsgpack(enc *msgpack.Encoder) error  { return enc.Encode(&p.T) }
func (p *mixedTime) DecodeMsgpack(dec *msgpack.Decoder) error { return dec.Decode(&p.T) }

// TestTimeInCustomCoder backs the package documentation on a time.Time
// written by a type's own encoding methods.
func TestTimeInCustomCoder(t *testing.T) {
	in := time.Date(2024, 2, 29, 1, 2, 3, 4, time.FixedZone("UTC+5:30", 19800))
	b, _ := EncodeValue(nil, plainTime{in})
	if out, err := DecodeValue[plainTime](b); err != nil || !out.T.Equal(in) || out.T.Location() != time.Local {
		t.Errorf("plainTime = %s, %v; want the instant in time.Local", describe(out.T), err)
	}
	b, _ = EncodeValue(nil, ptrTime{in})
	if out, err := DecodeValue[ptrTime](b); err != nil || !sameTime(in, out.T) {
		t.Errorf("ptrTime = %s, %v; want %s", describe(out.T), err, describe(in))
	}
	b, _ = EncodeValue(nil, mixedTime{in})
	if out, err := DecodeValue[mixedTime](b); !isKind(err, ErrDecode) {
		t.Errorf("mixedTime = %s, %v; want ErrDecode", describe(out.T), err)
	}
}

func BenchmarkTimeRoundTrip(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Skip(err)
	}
	for _, in := range []time.Time{time.Unix(1e9, 5).UTC(), time.Unix(1e9, 5).In(ny), time.Unix(1e9, 5).In(time.FixedZone("F", 3600))} {
		b.Run(in.Location().String(), func(b *testing.B) {
			items := make([]time.Time, 100)
			for i := range items {
				items[i] = in.Add(time.Duration(i) * time.Second)
			}
			b.ReportAllocs()
			for b.Loop() {
				p, err := EncodeItems(nil, items)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := DecodeItemsOwned[time.Time](p, len(items)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
