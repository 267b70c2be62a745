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

// placeBytes is item i's result: placeSizes cycled (mixed), or 64 KiB
// for every item (uniform).
func placeBytes(i int, uniform bool) []byte {
	n := placeSizes[i%len(placeSizes)]
	if uniform {
		n = 64 << 10
	}
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*13 + j*5 + j>>11)
	}
	return b
}

// TestPmapSenderPlacement checks sender-side placement (pmap_place.go):
// []byte results of 33 to 200 KiB (mixed) or all of 64 KiB (uniform) from
// ranks on the root's host arrive byte for byte, whether written into the
// root's grants or sent through MPI, at automatic and fixed batch sizes,
// MPI-only and hybrid; no two results share memory and none keeps more
// capacity than a grant allows. With the hataoridebug tag, on Linux: with
// HATAORI_SENDER_COPY=0 nothing is placed; with uniform results at batch
// 3, a rank that got more TASKs than its slots got one after the root had
// its first RESULT (every later TASK answers a READY that follows a
// RESULT), whose grants fit every result, so some are placed. The root's
// callbacks sleep so that the other ranks compute most items; the root
// counts its slots as busy (placeForceBusy: grants go out only while they
// compute, which on 2 shared cores depends on the schedule).
func TestPmapSenderPlacement(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapSenderPlacement", 2, 4)
		return
	}
	e := newRankEnv(t)
	placeForceBusy = true
	t.Cleanup(func() { placeForceBusy = false })
	ctx := context.Background()
	const n = 90
	for _, off := range []bool{false, true} {
		if off {
			t.Setenv("HATAORI_SENDER_COPY", "0")
		}
		for _, uniform := range []bool{false, true} {
			f := func(i int) ([]byte, error) {
				if e.rank == 0 {
					time.Sleep(time.Millisecond)
				}
				return placeBytes(i, uniform), nil
			}
			for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
				for _, batch := range []int{0, 3} {
					what := fmt.Sprintf("%s batch=%d uniform=%v off=%v", m.name, batch, uniform, off)
					before := debugPlacedCount()
					var st CallStats
					out, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode, Stats: &st}, e.items(n), f)
					e.checkBulk(what, err, out, n, func(i int, b []byte) bool { return bytes.Equal(b, placeBytes(i, uniform)) })
					if e.rank == 0 {
						e.checkPlaced(what, out, st, before, off, uniform && batch == 3)
					}
				}
			}
		}
	}
	e.checkReusable("after the placed calls")
}

// checkPlaced checks on the root the results' memory and the segments
// placed since before (see TestPmapSenderPlacement): none with off; some
// when every result fits a grant (fits, batch 3) and a rank got more
// TASKs than its slots.
func (e *rankEnv) checkPlaced(what string, out [][]byte, st CallStats, before int64, off, fits bool) {
	t := e.t
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
	placed := debugPlacedCount() - before
	again := false // a rank got a TASK after its first RESULT
	for r := 1; r < e.size; r++ {
		items := int64(0)
		for _, c := range st.Items[r] {
			items += c
		}
		again = again || items > 3*int64(len(st.Items[r]))
	}
	t.Logf("%s: items per rank %v, %d segments placed", what, st.Items, placed)
	switch {
	case before < 0 || runtime.GOOS != "linux":
	case off && placed != 0:
		t.Errorf("%s: %d segments placed with HATAORI_SENDER_COPY=0", what, placed)
	case !off && fits && again && placed == 0:
		t.Errorf("%s: a rank got TASKs after its first RESULT (items %v), none placed", what, st.Items)
	}
}
