//go:build mpirt || mpicgo

//lint:file-ignore U1000 the test types carry unexported and unused fields on purpose: they are what the type check must refuse

package wire

//lint:file-ignore U1000 the test types carry unexported fields nothing reads on purpose: they are what CheckType refuses (or, tagged, leaves out)

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// Types that cannot cross ranks.

type point struct{ x, y int }

type person struct {
	Name string
	hid  float64
}

type hidden struct{ x int }

type holder struct {
	ID int
	In hidden
}

type anyField struct{ V any }

type errField struct{ E error }

type chanField struct{ C chan int }

type unsafeField struct{ P unsafe.Pointer }

type uintptrField struct{ U uintptr }

type complexField struct{ Z complex128 }

type ptrKey struct{ P *int }

type ptrKeyMap struct{ M map[ptrKey]int }

// encOnly can be encoded by a method but has none to decode it.
type encOnly struct{ X int }

func (e encOnly) MarshalText() ([]byte, error) { return []byte(strconv.Itoa(e.X)), nil }

// decOnly is the converse.
type decOnly struct{ X int }

func (d *decOnly) UnmarshalText(b []byte) error {
	n, err := strconv.Atoi(string(b))
	d.X = n
	return err
}

// stamp embeds time.Time: its MarshalBinary is promoted and msgpack
// encodes the time alone, dropping Note.
type stamp struct {
	time.Time
	Note string
}

// custom has its own msgpack encoding of an unexported field.
type custom struct{ v int }

func (c custom) EncodeMsgpack(e *msgpack.Encoder) error { return e.EncodeInt(int64(c.v)) }

func (c *custom) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeInt()
	c.v = n
	return err
}

// promotedCustom embeds custom: custom's methods encode it alone.
type promotedCustom struct {
	custom
	A int
}

type promotedBulk struct {
	Bulk[float64]
	N int
}

type myint int

type embedsMyint struct {
	myint
	A int
}

type innerValue struct{ X int }

type embedsHiddenPtr struct {
	*innerValue
	A int
}

// Inner is an exported struct for embedding.
type Inner struct{ X int }

type embedsPtr struct {
	*Inner
	A int
}

type inlinePtr struct {
	*Inner `msgpack:",inline"`
	A      int
}

type inlineShadow struct {
	X     int
	Inner `msgpack:",inline"`
}

type dupTags struct {
	A int `msgpack:"k"`
	B int `msgpack:"k"`
}

type shadowAfter struct {
	Inner
	X int
}

// selfEmbed embeds a pointer to itself: msgpack inlines it without end.
type selfEmbed struct {
	*selfEmbed
	X int
}

type loopA struct {
	*LoopB
	A int
}

// LoopB closes the embedding loop of loopA.
type LoopB struct {
	*loopA `msgpack:"a"`
	B      int
}

type badNode struct {
	V    int
	Next *badNode
	tag  string
}

type badTree struct {
	Kids []badTree
	hid  int
}

type mutualA struct{ B *mutualB }

type mutualB struct {
	A *mutualA
	x int
}

// ptrOnly encodes itself through pointer-receiver methods.
type ptrOnly struct{ v int }

func (p *ptrOnly) EncodeMsgpack(e *msgpack.Encoder) error { return e.EncodeInt(int64(p.v)) }

func (p *ptrOnly) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeInt()
	p.v = n
	return err
}

func TestCheckTypeRefuses(t *testing.T) {
	cases := []struct {
		typ  reflect.Type
		want string // the message after "hataori: type <T> cannot cross ranks: "
	}{
		{reflect.TypeFor[point](), "field x is unexported, and msgpack skips unexported fields (export it, give wire.point its own msgpack encoding"},
		{reflect.TypeFor[person](), "field hid is unexported"},
		{reflect.TypeFor[holder](), "field In.x is unexported, and msgpack skips unexported fields (export it, give wire.hidden"},
		{reflect.TypeFor[[]point](), "field [i].x is unexported"},
		{reflect.TypeFor[map[string]point](), "field [k].x is unexported"},
		{reflect.TypeFor[*point](), "field x is unexported"},
		{reflect.TypeFor[[3]*person](), "field [i].hid is unexported"},
		{reflect.TypeFor[any](), "it has interface type interface {}: the dynamic type of an interface value does not survive the wire (an int comes back as int8"},
		{reflect.TypeFor[[]any](), "element [i] has interface type interface {}"},
		{reflect.TypeFor[map[string]any](), "element [k] has interface type interface {}"},
		{reflect.TypeFor[map[any]int](), "the map key type has interface type interface {}"},
		{reflect.TypeFor[anyField](), "field V has interface type interface {}"},
		{reflect.TypeFor[errField](), "field E has interface type error"},
		{reflect.TypeFor[chanField](), "field C has type chan int, which cannot cross ranks"},
		{reflect.TypeFor[func()](), "it has type func(), which cannot cross ranks"},
		{reflect.TypeFor[unsafeField](), "field P has type unsafe.Pointer, which cannot cross ranks"},
		{reflect.TypeFor[uintptrField](), "field U has type uintptr, which msgpack cannot encode (use uint64)"},
		{reflect.TypeFor[complexField](), "field Z has type complex128, which msgpack cannot encode"},
		{reflect.TypeFor[complex64](), "it has type complex64, which msgpack cannot encode"},
		{reflect.TypeFor[[][]complex128](), "element [i][i] has type complex128"},
		{reflect.TypeFor[map[*int]int](), "the map key type holds pointers (*int), whose identity does not survive the wire"},
		{reflect.TypeFor[ptrKeyMap](), "the key type of field M holds pointers (wire.ptrKey)"},
		{reflect.TypeFor[map[point]int](), "field [key].x is unexported"},
		{reflect.TypeFor[struct{ M map[[1]any]int }](), "element M[key][i] has interface type interface {}"},
		{reflect.TypeFor[map[string]ptrOnly](), "element [k] has type wire.ptrOnly, whose msgpack encoding method EncodeMsgpack has a pointer receiver"},
		{reflect.TypeFor[encOnly](), "it has type wire.encOnly, which has the msgpack encoding method MarshalText but no decoding method"},
		{reflect.TypeFor[[]decOnly](), "element [i] has type wire.decOnly, which has the msgpack decoding method UnmarshalText but no encoding method"},
		{reflect.TypeFor[stamp](), "field Note is lost: the msgpack encoding of wire.stamp is the MarshalBinary method promoted from its embedded field Time"},
		{reflect.TypeFor[promotedCustom](), "field A is lost: the msgpack encoding of wire.promotedCustom is the EncodeMsgpack method promoted from its embedded field custom"},
		{reflect.TypeFor[promotedBulk](), "field N is lost"},
		{reflect.TypeFor[embedsMyint](), "field myint is an embedded field of the unexported type wire.myint, which msgpack encodes but cannot decode into"},
		{reflect.TypeFor[embedsHiddenPtr](), "field innerValue is an embedded pointer to the unexported type wire.innerValue"},
		{reflect.TypeFor[embedsPtr](), "field Inner is an embedded pointer that msgpack inlines, so a nil *wire.Inner comes back as a pointer to a zero wire.Inner"},
		{reflect.TypeFor[inlinePtr](), "field Inner is an embedded pointer tagged inline, which msgpack cannot inline (embed the struct by value)"},
		{reflect.TypeFor[inlineShadow](), `field Inner.X is shadowed by an earlier field with the msgpack name "X"`},
		{reflect.TypeFor[dupTags](), `fields A and B of wire.dupTags both have the msgpack name "k", so one of them is lost`},
		{reflect.TypeFor[[]shadowAfter](), `in element [i]: fields Inner.X and X of wire.shadowAfter both have the msgpack name "X"`},
		{reflect.TypeFor[selfEmbed](), "field selfEmbed embeds wire.selfEmbed inside itself, which msgpack inlines without end"},
		{reflect.TypeFor[loopA](), "field LoopB.loopA embeds wire.loopA inside itself"},
		{reflect.TypeFor[badNode](), "field tag is unexported"},
		{reflect.TypeFor[badTree](), "field hid is unexported"},
		{reflect.TypeFor[struct{ Kids []hidden }](), "field Kids[i].x is unexported"},
		{reflect.TypeFor[mutualA](), "field B.x is unexported"},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			err := CheckType(c.typ)
			var we *Error
			if !errors.As(err, &we) || we.Kind != ErrType {
				t.Fatalf("CheckType(%v) = %v, want an *Error of kind ErrType", c.typ, err)
			}
			if !errors.Is(err, ErrUnsupportedType) || !errors.Is(err, &Error{Kind: ErrType}) {
				t.Errorf("errors.Is(%v, ErrUnsupportedType / kind ErrType) is false", err)
			}
			if errors.Is(err, &Error{Kind: ErrEncode}) {
				t.Errorf("%v matches kind ErrEncode", err)
			}
			prefix := fmt.Sprintf("hataori: type %s cannot cross ranks: ", c.typ)
			msg := err.Error()
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg[len(prefix):], c.want) {
				t.Errorf("message\n  %s\nwant\n  %s…%s…", msg, prefix, c.want)
			}
			if again := CheckType(c.typ); again != err {
				t.Errorf("second CheckType returned %p, first %p: not cached", again, err)
			}
		})
	}
	if err := CheckType(nil); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("CheckType(nil) = %v", err)
	}
}

// TestUncheckedLoss shows what the checker prevents: msgpack itself drops
// the unexported fields and changes an interface value's dynamic type,
// without an error.
func TestUncheckedLoss(t *testing.T) {
	b, err := EncodeValue(nil, point{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := DecodeValue[point](b); err != nil || p != (point{}) {
		t.Errorf("point round trip = %+v, %v; msgpack was expected to drop both fields", p, err)
	}
	b, err = EncodeValue[any](nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := DecodeValue[any](b); err != nil || reflect.TypeOf(v) != reflect.TypeFor[int8]() {
		t.Errorf("any(5) round trip = %T %v, %v; msgpack was expected to return an int8", v, v, err)
	}
	b, err = EncodeValue(nil, stamp{Time: time.Unix(5, 0), Note: "lost"})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := DecodeValue[stamp](b); err != nil || s.Note != "" {
		t.Errorf("stamp round trip = %+v, %v; msgpack was expected to drop Note", s, err)
	}
}

// Types that cross ranks.

type plain struct {
	Name   string
	Count  int64
	Ratio  float32
	Flag   bool
	Bytes  []byte
	Floats []float64
	Small  [4]byte
	Nested [2]Inner
}

type nest struct {
	Plain  plain
	Ptr    *plain
	Map    map[string]plain
	Int    map[int32][]string
	Arr    map[[2]int]string
	Struct map[Inner]uint8
	Bulk   Bulk[float64]
	Cplx   Bulk[complex128]
	U16    Bulk[uint16]
	Custom custom
	PtrOn  ptrOnly
	PtrPtr *ptrOnly
	Time   time.Time
	Dur    time.Duration
}

type ignored struct {
	Kept    string
	dropped float64 `msgpack:"-"`
	_       int
	marker  struct{}
}

type tagged struct {
	_msgpack struct{} `msgpack:",as_array"`
	A        int      `msgpack:"a"`
	B        int      `msgpack:"b"`
}

type renamed struct {
	A int    `msgpack:"alpha"`
	B string `msgpack:"beta,omitempty"`
	C []int  `msgpack:",omitempty"`
}

type embedsValue struct {
	Inner
	A int
}

type embedsHidden struct {
	innerValue
	A int
}

// shadowed's embedded struct is not inlined (its X would collide), so it
// travels as a field of its own.
type shadowed struct {
	X int
	innerValue
}

type noinlinePtr struct {
	*Inner `msgpack:",noinline"`
	A      int
}

// SelfNoinline embeds a pointer to itself as a field of its own.
type SelfNoinline struct {
	*SelfNoinline `msgpack:",noinline"`
	X             int
}

type tree struct {
	Name string
	Kids []tree
	Up   *tree `msgpack:"-"`
}

type node struct {
	V    int
	Next *node
}

// blob encodes its unexported fields with encoding.BinaryMarshaler.
type blob struct{ a, b uint32 }

func (b blob) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, b.a), b.b), nil
}

func (b *blob) UnmarshalBinary(p []byte) error {
	if len(p) != 8 {
		return errors.New("blob: want 8 bytes")
	}
	b.a, b.b = binary.LittleEndian.Uint32(p), binary.LittleEndian.Uint32(p[4:])
	return nil
}

// word uses msgpack.Marshaler.
type word struct{ s string }

func (w word) MarshalMsgpack() ([]byte, error) { return msgpack.Marshal(w.s) }

func (w *word) UnmarshalMsgpack(b []byte) error { return msgpack.Unmarshal(b, &w.s) }

// level uses encoding.TextMarshaler.
type level struct{ n int }

func (l level) MarshalText() ([]byte, error) { return []byte(strconv.Itoa(l.n)), nil }

func (l *level) UnmarshalText(b []byte) error {
	n, err := strconv.Atoi(string(b))
	l.n = n
	return err
}

type methods struct {
	Blob  blob
	Word  word
	Level level
	Keys  map[level]blob
}

// accept checks that T is accepted and that v round-trips exactly through
// every codec entry point, with eq deciding equality (nil: DeepEqual).
func accept[T any](t *testing.T, v T, eq func(a, b T) bool) {
	t.Helper()
	if eq == nil {
		eq = func(a, b T) bool { return reflect.DeepEqual(a, b) }
	}
	if err := CheckTypeFor[T](); err != nil {
		t.Errorf("CheckType(%T) = %v, want nil", v, err)
		return
	}
	b, err := EncodeValue(nil, v)
	if err != nil {
		t.Errorf("EncodeValue(%T): %v", v, err)
		return
	}
	if got, err := DecodeValue[T](b); err != nil || !eq(got, v) {
		t.Errorf("DecodeValue(%T) = %#v, %v; want %#v", v, got, err, v)
	}
	if got, err := DecodeValueOwned[T](append([]byte(nil), b...)); err != nil || !eq(got, v) {
		t.Errorf("DecodeValueOwned(%T) = %#v, %v; want %#v", v, got, err, v)
	}
	var zero T
	items := []T{v, zero, v}
	ib, err := EncodeItems(nil, items)
	if err != nil {
		t.Errorf("EncodeItems(%T): %v", v, err)
		return
	}
	got, err := DecodeItemsOwned[T](ib, len(items))
	if err != nil || len(got) != len(items) {
		t.Errorf("DecodeItemsOwned(%T) = %v, %v", v, got, err)
		return
	}
	for i := range items {
		if !eq(got[i], items[i]) {
			t.Errorf("DecodeItemsOwned(%T) item %d = %#v, want %#v", v, i, got[i], items[i])
		}
	}
}

func TestCheckTypeAcceptsAndRoundTrips(t *testing.T) {
	accept(t, 42, nil)
	accept(t, "héllo, 世界", nil)
	accept(t, -1.5, nil)
	accept(t, []float64{1, math.Inf(-1), 3}, nil)
	accept(t, []complex128{1 + 2i, -3i}, nil) // top level: the bulk path
	accept(t, myFloats{1, 2}, nil)
	accept(t, Bulk[float64]{4, 5}, nil)
	accept(t, Bulk[float64]{}, nil) // empty stays empty, not nil (found by FuzzDecodeValue)
	accept(t, struct{ E, N Bulk[int32] }{E: Bulk[int32]{}}, nil)
	accept(t, [][]float64{{1}, nil, {}}, nil)
	accept(t, []string{"a", ""}, nil)
	accept(t, map[string]int{"b": 2, "a": 1}, nil)
	accept(t, [3]int{1, 2, 3}, nil)
	p := plain{Name: "p", Count: math.MinInt64, Ratio: 0.25, Flag: true, Bytes: []byte{0, 255}, Floats: []float64{},
		Small: [4]byte{1, 2, 3, 4}, Nested: [2]Inner{{1}, {2}}}
	accept(t, p, nil)
	accept(t, &p, nil)
	accept(t, []*plain{&p, nil}, nil)
	pp := &ptrOnly{v: 8}
	n := nest{Plain: p, Ptr: &p, Map: map[string]plain{"x": p}, Int: map[int32][]string{-1: {"a"}, 2: nil},
		Arr: map[[2]int]string{{1, 2}: "a"}, Struct: map[Inner]uint8{{3}: 4},
		Bulk: Bulk[float64]{1, 2}, Cplx: Bulk[complex128]{1i}, U16: Bulk[uint16]{65535},
		Custom: custom{v: -9}, PtrOn: ptrOnly{v: 7}, PtrPtr: pp,
		Time: time.Date(2025, 6, 7, 8, 9, 10, 11, time.UTC), Dur: time.Hour}
	accept(t, n, func(a, b nest) bool {
		ta, tb := a.Time, b.Time
		a.Time, b.Time = time.Time{}, time.Time{}
		return ta.Equal(tb) && reflect.DeepEqual(a, b)
	})
	accept(t, custom{v: 3}, nil)
	accept(t, ptrOnly{v: 4}, nil) // pointer-receiver methods at the top level
	accept(t, []ptrOnly{{1}, {2}}, nil)
	accept(t, map[string]*ptrOnly{"a": {5}}, nil)
	accept(t, methods{Blob: blob{1, 2}, Word: word{"w"}, Level: level{3}, Keys: map[level]blob{{1}: {3, 4}}}, nil)
	accept(t, ignored{Kept: "k"}, nil) // dropped stays zero: it is tagged out
	accept(t, tagged{A: 1, B: 2}, nil)
	accept(t, renamed{A: 1, B: "b", C: []int{3}}, nil)
	accept(t, embedsValue{Inner: Inner{X: 1}, A: 2}, nil)
	accept(t, embedsHidden{innerValue: innerValue{X: 1}, A: 2}, nil)
	accept(t, shadowed{X: 1, innerValue: innerValue{X: 2}}, nil)
	accept(t, noinlinePtr{Inner: &Inner{X: 1}, A: 2}, nil)
	accept(t, noinlinePtr{A: 2}, nil)
	accept(t, tree{Name: "root", Kids: []tree{{Name: "a"}, {Name: "b", Kids: []tree{{Name: "c"}}}}}, nil)
	accept(t, &node{V: 1, Next: &node{V: 2}}, nil)
	accept(t, SelfNoinline{SelfNoinline: &SelfNoinline{X: 2}, X: 1}, nil)
	now := time.Now()
	accept(t, now, func(a, b time.Time) bool { return a.Equal(b) })
	accept(t, struct{}{}, nil)
}

// TestPointerReceiverEncoding shows that values whose encoding methods
// have pointer receivers are encoded (msgpack needs an addressable value).
func TestPointerReceiverEncoding(t *testing.T) {
	b, err := EncodeValue(nil, ptrOnly{v: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, []byte{3}) {
		t.Errorf("encoding % x, want 03", b)
	}
	// The fast path for other types encodes the same bytes.
	for _, v := range []any{1, "s", 1.5, true, []string{"a"}, map[string]bool{"x": true}} {
		a, err1 := msgpack.Marshal(v)
		w, err2 := EncodeValue(nil, v)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a, w) {
			t.Errorf("%T: wire % x, msgpack % x (%v, %v)", v, w, a, err1, err2)
		}
	}
}

func TestCheckTypeCachedAllocs(t *testing.T) {
	typ := reflect.TypeFor[nest]()
	if err := CheckType(typ); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = CheckType(typ) }); n != 0 {
		t.Errorf("a cached CheckType allocates %v times", n)
	}
}

func BenchmarkCheckTypeCached(b *testing.B) {
	typ := reflect.TypeFor[nest]()
	_ = CheckType(typ)
	for b.Loop() {
		_ = CheckType(typ)
	}
}

type scalars struct {
	F   float64
	G   float32
	S   string
	Nil []string
	Emp []string
	NM  map[string]int
	EM  map[string]int
}

// TestExactScalars backs the package documentation's claims: floats
// bit for bit, strings byte for byte, nil and empty kept apart.
func TestExactScalars(t *testing.T) {
	in := scalars{F: math.Float64frombits(0x7ff8_0000_dead_beef), G: float32(math.Copysign(0, -1)), S: "\xff\xfe ok",
		Emp: []string{}, EM: map[string]int{}}
	if err := CheckTypeFor[scalars](); err != nil {
		t.Fatal(err)
	}
	b, err := EncodeValue(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeValue[scalars](b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Float64bits(out.F) != math.Float64bits(in.F) || math.Float32bits(out.G) != math.Float32bits(in.G) {
		t.Errorf("floats %x %x, want %x %x", math.Float64bits(out.F), math.Float32bits(out.G), math.Float64bits(in.F), math.Float32bits(in.G))
	}
	if out.S != in.S || out.Nil != nil || out.Emp == nil || out.NM != nil || out.EM == nil {
		t.Errorf("got %#v, want %#v", out, in)
	}
}
