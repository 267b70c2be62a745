//go:build mpirt || mpicgo

package wire

import (
	"encoding"
	"math/big"
	"net"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

type valueEncoder struct{}

func (valueEncoder) EncodeMsgpack(*msgpack.Encoder) error { return nil }

type pointerDecoder struct{}

func (*pointerDecoder) DecodeMsgpack(*msgpack.Decoder) error { return nil }

// Same names, other signatures: msgpack ignores these.
type wrongArgs struct{}

func (wrongArgs) EncodeMsgpack(*msgpack.Decoder) error { return nil }
func (wrongArgs) DecodeMsgpack(msgpack.Decoder) error  { return nil }
func (wrongArgs) MarshalMsgpack(int) ([]byte, error)   { return nil, nil }
func (wrongArgs) UnmarshalText(string) error           { return nil }

type wrongResults struct{}

func (wrongResults) MarshalBinary() []byte           { return nil }
func (wrongResults) UnmarshalBinary([]byte) bool     { return false }
func (wrongResults) MarshalText() (string, error)    { return "", nil }
func (wrongResults) UnmarshalMsgpack(...byte) error  { return nil }
func (wrongResults) EncodeMsgpack(*msgpack.Encoder)  {}
func (*wrongResults) DecodeMsgpack(*msgpack.Decoder) {}

// A look-alike Encoder of another package path (this one).
type Encoder struct{}
type lookAlike struct{}

func (lookAlike) EncodeMsgpack(*Encoder) error { return nil }

type namedBytes []byte
type otherBytes struct{}

func (otherBytes) MarshalText() (namedBytes, error) { return nil, nil }

type marshalers struct{}

func (marshalers) MarshalMsgpack() ([]byte, error)       { return nil, nil }
func (*marshalers) UnmarshalMsgpack([]byte) error        { return nil }
func (marshalers) MarshalBinary() ([]byte, error)        { return nil, nil }
func (*marshalers) UnmarshalBinary([]byte) error         { return nil }
func (*marshalers) MarshalText() ([]byte, error)         { return nil, nil }
func (marshalers) UnmarshalText([]byte) error            { return nil }
func (*marshalers) EncodeMsgpack(*msgpack.Encoder) error { return nil }

type embedsEncoder struct {
	valueEncoder
	N int
}

type embedsPointer struct {
	*pointerDecoder
}

// TestCodingMethodsMatchInterfaces: the type check recognises msgpack's and
// encoding's interfaces by method name and signature, without importing
// msgpack; that must agree with Implements, on the type and on its pointer,
// for every interface, on types that have the methods (value and pointer
// receivers, promoted, interfaces) and on types whose methods of those
// names have other signatures.
func TestCodingMethodsMatchInterfaces(t *testing.T) {
	ifaces := map[string]reflect.Type{
		"EncodeMsgpack":    reflect.TypeFor[msgpack.CustomEncoder](),
		"DecodeMsgpack":    reflect.TypeFor[msgpack.CustomDecoder](),
		"MarshalMsgpack":   reflect.TypeFor[msgpack.Marshaler](),
		"UnmarshalMsgpack": reflect.TypeFor[msgpack.Unmarshaler](),
		"MarshalBinary":    reflect.TypeFor[encoding.BinaryMarshaler](),
		"UnmarshalBinary":  reflect.TypeFor[encoding.BinaryUnmarshaler](),
		"MarshalText":      reflect.TypeFor[encoding.TextMarshaler](),
		"UnmarshalText":    reflect.TypeFor[encoding.TextUnmarshaler](),
	}
	methods := append(append([]codingMethod{}, encodeMethods...), decodeMethods...)
	if len(methods) != len(ifaces) {
		t.Fatalf("%d coding methods, %d interfaces", len(methods), len(ifaces))
	}
	types := []reflect.Type{
		reflect.TypeFor[valueEncoder](), reflect.TypeFor[pointerDecoder](), reflect.TypeFor[*pointerDecoder](),
		reflect.TypeFor[wrongArgs](), reflect.TypeFor[wrongResults](), reflect.TypeFor[lookAlike](),
		reflect.TypeFor[otherBytes](), reflect.TypeFor[marshalers](), reflect.TypeFor[*marshalers](),
		reflect.TypeFor[embedsEncoder](), reflect.TypeFor[embedsPointer](),
		reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[encoding.TextMarshaler](),
		reflect.TypeFor[interface{ MarshalText() (string, error) }](), reflect.TypeFor[any](),
		reflect.TypeFor[time.Time](), reflect.TypeFor[*time.Time](), reflect.TypeFor[big.Int](),
		reflect.TypeFor[net.IP](), reflect.TypeFor[int](), reflect.TypeFor[[]float64](),
		reflect.TypeFor[map[string]int](), reflect.TypeFor[struct{ A int }](),
	}
	found := 0
	for _, m := range methods {
		it, ok := ifaces[m.name]
		if !ok {
			t.Fatalf("coding method %s has no interface in the table", m.name)
		}
		for _, typ := range types {
			want := typ.Implements(it) || reflect.PointerTo(typ).Implements(it)
			if got := m.on(typ); got != want {
				t.Errorf("%s on %v = %v, Implements(%v) says %v", m.name, typ, got, it, want)
			}
			if got, want := m.in(typ), typ.Implements(it); got != want {
				t.Errorf("%s in %v = %v, Implements(%v) says %v", m.name, typ, got, it, want)
			}
			if want {
				found++
			}
		}
	}
	if found < 20 {
		t.Errorf("only %d (method, type) pairs implement: the table no longer tests much", found)
	}
}
