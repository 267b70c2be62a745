//go:build mpirt || mpicgo

package hataori

import (
	"errors"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// errLength matches any *wire.Error of kind wire.ErrLength (errors.Is).
var errLength = &wire.Error{Kind: wire.ErrLength}

// setMaxBytes lowers wire.MaxBytes for one test.
func setMaxBytes(t *testing.T, n int64) {
	t.Helper()
	old := wire.MaxBytes
	wire.MaxBytes = n
	t.Cleanup(func() { wire.MaxBytes = old })
}

// limitItems are the reviewer's five []byte items (4×100 + 550 bytes):
// their payload fits a 1000-byte limit, but with the header and 40 bytes
// of raw indices the frame does not.
func limitItems() [][]byte {
	items := make([][]byte, 5)
	for i := range items {
		n := 100
		if i == 4 {
			n = 550
		}
		items[i] = make([]byte, n)
		for j := range items[i] {
			items[i][j] = byte(i + j)
		}
	}
	return items
}

// frameBuilders are the two frame builders whose size the limit bounds.
var frameBuilders = []struct {
	name  string
	build func(dst []byte, items [][]byte) ([]byte, error)
}{
	{"TASK", func(dst []byte, items [][]byte) ([]byte, error) {
		return taskFrame(dst, 3, 0, items)
	}},
	{"RESULT", func(dst []byte, items [][]byte) ([]byte, error) {
		indices := make([]int64, len(items))
		for i := range indices {
			indices[i] = int64(i)
		}
		return wholeResult(dst, 3, indices, items)
	}},
}

// TestFrameBuildersBoundWholeFrame checks that a TASK or RESULT whose
// payload fits wire.MaxBytes but whose whole frame (header and indices
// included) does not fails to build with wire.ErrLength, the error the
// recoverable paths handle, instead of reaching sendFrame.
func TestFrameBuildersBoundWholeFrame(t *testing.T) {
	items := limitItems()
	for _, b := range frameBuilders {
		t.Run(b.name, func(t *testing.T) {
			setMaxBytes(t, 1000)
			for _, dst := range [][]byte{nil, make([]byte, 0, 4096)} {
				buf, err := b.build(dst, items)
				var we *wire.Error
				if !errors.As(err, &we) || we.Kind != wire.ErrLength || !errors.Is(err, errLength) {
					t.Fatalf("cap(dst) %d: %d-byte frame, err %v; want wire.ErrLength", cap(dst), len(buf), err)
				}
				if buf != nil {
					t.Errorf("cap(dst) %d: a %d-byte frame returned with the error", cap(dst), len(buf))
				}
			}
		})
	}
}

// TestFrameBuildersAtLimit checks the boundary: a frame of exactly
// wire.MaxBytes bytes builds (and sendFrame's size check would accept it),
// one byte less of limit fails with wire.ErrLength.
func TestFrameBuildersAtLimit(t *testing.T) {
	items := limitItems()
	for _, b := range frameBuilders {
		t.Run(b.name, func(t *testing.T) {
			full, err := b.build(nil, items)
			if err != nil {
				t.Fatal(err)
			}
			size := int64(len(full))
			if size <= 1000 {
				t.Fatalf("frame of %d bytes: the items no longer overflow a 1000-byte limit", size)
			}

			setMaxBytes(t, size)
			buf, err := b.build(nil, items)
			if err != nil || int64(len(buf)) != size {
				t.Fatalf("at the limit %d: %d-byte frame, err %v", size, len(buf), err)
			}
			h, err := wire.ParseHeader(buf)
			if err != nil || h.Count != uint32(len(items)) || h.Len != uint64(size-wire.HeaderSize) {
				t.Fatalf("at the limit: header %+v, %v", h, err)
			}

			wire.MaxBytes = size - 1
			if buf, err = b.build(nil, items); !errors.Is(err, errLength) {
				t.Fatalf("one byte over the limit %d: %d-byte frame, err %v; want wire.ErrLength", size-1, len(buf), err)
			}
		})
	}
}
