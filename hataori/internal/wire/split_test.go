//go:build mpirt || mpicgo

package wire

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"
)

func TestSplitJoin(t *testing.T) {
	v := []float64{1, 2, 3}
	head, body, err := SplitValue([]byte("H"), v)
	if err != nil {
		t.Fatal(err)
	}
	if nativeLittle && (len(body) != 24 || unsafe.Pointer(&body[0]) != unsafe.Pointer(&v[0])) {
		t.Fatalf("body is not a view of the value")
	}
	whole, _ := EncodeValue([]byte("H"), v)
	if !bytes.Equal(append(append([]byte{}, head...), body...), whole) {
		t.Fatalf("head+body % x differs from EncodeValue % x", append(head, body...), whole)
	}
	got, buf := BodyBuffer[[]float64](len(body))
	copy(buf, body)
	got, err = JoinValue(head[1:], got, buf)
	if err != nil || !reflect.DeepEqual(got, v) {
		t.Fatalf("JoinValue = %v, %v", got, err)
	}
	if nativeLittle && unsafe.Pointer(&got[0]) != unsafe.Pointer(&buf[0]) {
		t.Errorf("JoinValue copied a bulk body")
	}
	// Non-bulk values and nil slices are all head.
	for _, x := range []any{"text", []float64(nil)} {
		var h, b []byte
		switch x := x.(type) {
		case string:
			h, b, err = SplitValue(nil, x)
		case []float64:
			h, b, err = SplitValue(nil, x)
		}
		if err != nil || b != nil || len(h) == 0 {
			t.Errorf("SplitValue(%#v) = % x, % x, %v", x, h, b, err)
		}
	}
	// A receiver whose type differs decodes the joined parts or fails typed.
	s, buf2 := BodyBuffer[int](len(body))
	copy(buf2, body)
	if _, err := JoinValue(head[1:], s, buf2); !isKind(err, ErrDecode) {
		t.Errorf("JoinValue into int = %v, want ErrDecode", err)
	}
	b8, buf3 := BodyBuffer[[]byte](len(body))
	copy(buf3, body)
	if got, err := JoinValue(head[1:], b8, buf3); err != nil || len(got) != 24 {
		t.Errorf("JoinValue into []byte = %v, %v", got, err)
	}
	// A body length the head does not announce.
	g, buf4 := BodyBuffer[[]float64](16)
	if _, err := JoinValue(head[1:], g, buf4); !isKind(err, ErrLength) {
		t.Errorf("JoinValue with a short body = %v, want ErrLength", err)
	}
	// A body that is not a whole number of elements.
	g2, buf5 := BodyBuffer[[]float64](12)
	if _, err := JoinValue([]byte{codeBin8, 12}, g2, buf5); !isKind(err, ErrDecode) {
		t.Errorf("JoinValue with 12 bytes of float64 = %v, want ErrDecode", err)
	}
}

func TestDecodeValueOwnedAliases(t *testing.T) {
	v := make([]float64, 100)
	v[99] = 9
	payload, _ := EncodeValue(nil, v) // bin8 header? 800 bytes: bin16, 3 bytes
	pad := AlignPad(0, len(payload))
	buf := make([]byte, pad+len(payload))
	copy(buf[pad:], payload)
	got, err := DecodeValueOwned[[]float64](buf[pad:])
	if err != nil || got[99] != 9 || len(got) != 100 {
		t.Fatalf("DecodeValueOwned = %v, %v", len(got), err)
	}
	if uintptr(unsafe.Pointer(&got[0]))-uintptr(unsafe.Pointer(&buf[0])) >= uintptr(len(buf)) {
		t.Errorf("DecodeValueOwned copied an aligned bulk payload")
	}
	// Misaligned data is copied, and DecodeValue never aliases.
	mis := make([]byte, pad+1+len(payload))
	copy(mis[pad+1:], payload)
	for name, f := range map[string]func([]byte) ([]float64, error){"owned": DecodeValueOwned[[]float64], "plain": DecodeValue[[]float64]} {
		p := mis[pad+1:]
		if name == "plain" {
			p = buf[pad:]
		}
		got, err := f(p)
		if err != nil || got[99] != 9 {
			t.Fatalf("%s: %v", name, err)
		}
		if uintptr(unsafe.Pointer(&got[0]))-uintptr(unsafe.Pointer(&p[0])) < uintptr(len(p)) {
			t.Errorf("%s decode aliased its payload", name)
		}
	}
	for _, n := range []int{10, 300, 70000} {
		if (AlignPad(24, n)+24+binHeaderLen(n-binHeaderLen(n)))%8 != 0 {
			t.Errorf("AlignPad(24, %d) = %d does not align the data", n, AlignPad(24, n))
		}
	}
}
