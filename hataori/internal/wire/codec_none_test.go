//go:build !mpirt && !mpicgo

package wire

import (
	"errors"
	"strings"
	"testing"
)

// TestNoCodecWithoutBackend: without an MPI backend every codec entry
// point fails with a typed error that names the fix, encodes nothing and
// decodes nothing.
func TestNoCodecWithoutBackend(t *testing.T) {
	dst := []byte("H")
	type outcome struct {
		err  error
		kind ErrorKind
	}
	checks := map[string]outcome{}
	b, err := EncodeValue(dst, "x")
	if string(b) != "H" {
		t.Errorf("EncodeValue appended %q", b[1:])
	}
	checks["EncodeValue"] = outcome{err, ErrEncode}
	b, err = EncodeItems(dst, []float64{1})
	if string(b) != "H" {
		t.Errorf("EncodeItems appended %q", b[1:])
	}
	checks["EncodeItems"] = outcome{err, ErrEncode}
	_, _, err = SplitValue(dst, map[string]int{"a": 1})
	checks["SplitValue"] = outcome{err, ErrEncode}
	v, err := DecodeValue[string]([]byte{0xa1, 'x'})
	if v != "" {
		t.Errorf("DecodeValue = %q", v)
	}
	checks["DecodeValue"] = outcome{err, ErrDecode}
	_, err = DecodeValueOwned[[]byte]([]byte{codeBin8, 0})
	checks["DecodeValueOwned"] = outcome{err, ErrDecode}
	items, err := DecodeItemsOwned[int]([]byte{1}, 1)
	if items != nil {
		t.Errorf("DecodeItemsOwned = %v", items)
	}
	checks["DecodeItemsOwned"] = outcome{err, ErrDecode}
	_, err = JoinValue([]byte{0x01}, 0, nil)
	checks["JoinValue"] = outcome{err, ErrDecode}
	for name, c := range checks {
		var we *Error
		if !errors.As(c.err, &we) || we.Kind != c.kind || !strings.Contains(c.err.Error(), "-tags mpirt") {
			t.Errorf("%s without a backend: %v, want an *Error of kind %v naming the build tags", name, c.err, c.kind)
		}
	}
}
