//go:build mpirt || mpicgo

package wire

import (
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// TestValidateAcceptsEveryFormat runs validate over msgpack encodings that
// use every format family (fixed and sized ints, floats, str8/16/32,
// bin8/16/32, array16/32, map16/32, ext / fixext via time.Time).
func TestValidateAcceptsEveryFormat(t *testing.T) {
	big := make([]any, 70000)
	for i := range big {
		big[i] = i - 35000
	}
	bigMap := map[string]int{}
	for i := 0; i < 70000; i++ {
		bigMap[itoa(i)] = i
	}
	values := []any{
		nil, true, false, 1, -1, 200, -200, 70000, -70000, int64(1) << 40, -(int64(1) << 40), uint64(1) << 63,
		float32(1.5), 2.5, "", strings.Repeat("a", 31), strings.Repeat("b", 200), strings.Repeat("c", 70000),
		[]byte{}, make([]byte, 300), make([]byte, 70000), []int{1, 2}, make([]int, 20), big,
		map[string]int{"a": 1}, bigMap, time.Unix(1, 0), time.Unix(1, 5), time.Unix(1<<35, 5),
		map[string]any{"nested": []any{map[string]any{"x": []byte{1}}}},
	}
	for i, v := range values {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		if err := validate(b, 1); err != nil {
			t.Errorf("value %d (%T): validate: %v", i, v, err)
		}
		if err := validate(b[:len(b)-1], 1); !isKind(err, ErrTruncated) {
			t.Errorf("value %d (%T) cut short: validate = %v, want ErrTruncated", i, v, err)
		}
	}
}

// TestValidateNamesTheValuesOffset: a refused value is named by the offset
// of its first byte (its code), not of its length field.
func TestValidateNamesTheValuesOffset(t *testing.T) {
	for _, c := range []struct {
		name  string
		p     []byte
		count int
		want  string
	}{
		{"str8 cut", []byte{0x01, 0xd9, 0x03, 0x61}, 2, "value at offset 1 needs 3 bytes"},
		{"bin16 cut", []byte{0xc5, 0x00, 0x04, 0x00}, 1, "value at offset 0 needs 4 bytes"},
		{"array16 too long", []byte{0x02, 0xdc, 0x00, 0x03, 0x01}, 2, "container at offset 1 announces 3 values"},
		{"fixmap too long", []byte{0x83, 0x01}, 1, "container at offset 0 announces 6 values"},
		{"invalid code", []byte{0x01, 0xc1}, 2, "invalid msgpack code 0xc1 at offset 1"},
	} {
		err := validate(c.p, c.count)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: validate = %v, want a message containing %q", c.name, err, c.want)
		}
	}
}
