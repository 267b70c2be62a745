package wire

import (
	"errors"
	"testing"
)

func FuzzParseHeader(f *testing.F) {
	b := make([]byte, HeaderSize)
	Header{Version: Version, Kind: KindResult, Count: 2, BatchID: 5, Len: 9}.Put(b)
	f.Add(b)
	f.Add(b[:10])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseHeader(data)
		if err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// A parsed header re-encodes to the same bytes.
		out := make([]byte, HeaderSize)
		h.Put(out)
		if string(out) != string(data[:HeaderSize]) {
			t.Fatalf("header %+v re-encodes to % x, input % x", h, out, data[:HeaderSize])
		}
	})
}

type fuzzItem struct {
	A string
	B []float64
	C Bulk[int32]
	D map[string]uint8
}

func fuzzDecode(t *testing.T, data []byte, count int) {
	check := func(err error) {
		if err == nil {
			return
		}
		var we *Error
		if !errors.As(err, &we) {
			t.Fatalf("untyped error %v", err)
		}
	}
	_, err := DecodeItems[fuzzItem](data, count)
	check(err)
	_, err = DecodeItems[[]float64](data, count)
	check(err)
	_, err = DecodeItems[string](data, count)
	check(err)
	_, err = DecodeValue[[]byte](data)
	check(err)
	_, err = DecodeValue[map[string]any](data)
	check(err)
}

func FuzzDecodeItems(f *testing.F) {
	seed, _ := EncodeItems(nil, []fuzzItem{{A: "x", B: []float64{1}, C: Bulk[int32]{2}, D: map[string]uint8{"k": 1}}, {}})
	f.Add(seed, 2)
	f.Add(seed[:len(seed)/2], 2)
	fl, _ := EncodeItems(nil, [][]float64{{1, 2}, nil})
	f.Add(fl, 2)
	f.Add([]byte{codeBin32, 0xff, 0xff, 0xff, 0xff}, 1)
	f.Add([]byte{0xdd, 0x7f, 0xff, 0xff, 0xff}, 1) // array32 with a forged length
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, data []byte, count int) {
		fuzzDecode(t, data, count%8)
	})
}

func FuzzJoinValue(f *testing.F) {
	head, body, _ := SplitValue(nil, []float64{1, 2})
	f.Add(head, body)
	f.Add([]byte{codeBin32, 0, 0, 0, 16}, make([]byte, 16))
	f.Add([]byte{0xa1, 'x'}, []byte{})
	f.Fuzz(func(t *testing.T, head, body []byte) {
		v, buf := BodyBuffer[[]float64](len(body))
		copy(buf, body)
		if _, err := JoinValue(head, v, buf); err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %v", err)
			}
		}
		s, sbuf := BodyBuffer[fuzzItem](len(body))
		copy(sbuf, body)
		if _, err := JoinValue(head, s, sbuf); err != nil {
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}
