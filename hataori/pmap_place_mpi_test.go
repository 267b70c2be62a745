//go:build mpirt || mpicgo

package hataori

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// placeSizes are the result sizes of TestPmapSenderPlacement, cycled by
// item: mostly one size (whose grants fit), and sizes a grant of it does
// not take (more than it, less than half of it), so that placed segments
// and segments sent through MPI mix in one RESULT.
var placeSizes = []int{64 << 10, 64 << 10, 64 << 10, 200 << 10, 64<<10 - 5, 33 << 10, 64 << 10}

func placeBytes(i int) []byte {
	b := make([]byte, placeSizes[i%len(placeSizes)])
	for j := range b {
		b[j] = byte(i*13 + j*5 + j>>11)
	}
	return b
}

// TestPmapSenderPlacement checks sender-side placement (pmap_place.go):
// []byte results of 33 to 200 KiB from ranks on the root's host arrive
// byte for byte, whether written into the root's grants or sent through
// MPI, at automatic and fixed batch sizes, MPI-only and hybrid; no two
// results share memory and none keeps more capacity than a grant allows;
// with the hataoridebug tag the root counted placed segments (Linux:
// every rank of these jobs runs on one host), and none with
// HATAORI_SENDER_COPY=0. The root's callbacks sleep so that the other
// ranks compute most items.
func TestPmapSenderPlacement(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapSenderPlacement", 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	const n = 90
	f := func(i int) ([]byte, error) {
		if e.rank == 0 {
			time.Sleep(time.Millisecond)
		}
		return placeBytes(i), nil
	}
	for _, off := range []bool{false, true} {
		if off {
			t.Setenv("HATAORI_SENDER_COPY", "0")
		}
		for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
			for _, batch := range []int{0, 3} {
				what := fmt.Sprintf("%s batch=%d off=%v", m.name, batch, off)
				before := debugPlacedCount()
				var st CallStats
				out, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode, Stats: &st}, e.items(n), f)
				e.checkBulk(what, err, out, n, func(i int, b []byte) bool { return bytes.Equal(b, placeBytes(i)) })
				if e.rank != 0 {
					continue
				}
				seen := map[uintptr]int{}
				for i, b := range out {
					if cap(b) > 2*len(b) {
						t.Errorf("%s: result %d has %d bytes in %d", what, i, len(b), cap(b))
					}
					if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); seen[p] != 0 {
						t.Errorf("%s: results %d and %d share memory", what, seen[p]-1, i)
					} else {
						seen[p] = i + 1
					}
				}
				remote := int64(0)
				for r := 1; r < e.size; r++ {
					for _, c := range st.Items[r] {
						remote += c
					}
				}
				placed := debugPlacedCount() - before
				t.Logf("%s: %d items on other ranks, %d segments placed", what, remote, placed)
				switch {
				case before < 0 || runtime.GOOS != "linux":
				case off && placed != 0:
					t.Errorf("%s: %d segments placed with HATAORI_SENDER_COPY=0", what, placed)
				case !off && remote >= 20 && placed == 0:
					t.Errorf("%s: other ranks ran %d items, none placed", what, remote)
				}
			}
		}
	}
	e.checkReusable("after the placed calls")
}
