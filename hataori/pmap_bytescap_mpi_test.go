//go:build mpirt || mpicgo

package hataori

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// bytesCapLimit is the batch byte bound of TestPmapBatchBytesCap: 16
// results of smallItemsResultBytes (1 KiB), less their frame's indices and
// header, so that 15 results fit and 16 do not.
const bytesCapLimit = 16 << 10

// TestPmapBatchBytesCap checks, with real ranks, that automatic batches
// keep their TASKs and RESULTs under the batch byte bound
// (sched.Config.MaxBatchBytes, from the RESULTs' measured sizes): every
// rank sets the bound to 16 KiB, and 4,000 items of about 20 µs whose
// results are 1 KiB each, with a zero Options, would otherwise grow
// batches to hundreds of items. Every remote slot's largest batch must
// stay at most 15 items and, under hataoridebug, the largest RESULT
// under the bound; the results must be right and in order. MPI-only and
// hybrid, 2 and 4 ranks.
func TestPmapBatchBytesCap(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 45 * time.Second})
		}
		return
	}
	e := newRankEnv(t)
	batchBytesLimit = bytesCapLimit
	defer func() { batchBytesLimit = 0 }()
	const n = 4000
	for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
		var items Maybe[[]int]
		if e.rank == 0 {
			xs := make([]int, n)
			for i := range xs {
				xs[i] = i
			}
			items = Some(xs)
		}
		var st CallStats
		fed := e.remotesFed()
		var out [][]byte
		var err error
		fs := e.traceFrames(func(*frameTrace) {
			out, err = Pmap(context.Background(), e.world, m.d, Options{Mode: m.mode, Stats: &st}, items, func(x int) ([]byte, error) {
				fed()
				for end := time.Now().Add(20 * time.Microsecond); time.Now().Before(end); {
				}
				return bigResult(x), nil
			})
		})
		if err != nil {
			t.Fatalf("%s: rank %d: %v", m.name, e.rank, err)
		}
		if e.rank != 0 {
			continue
		}
		if len(out) != n {
			t.Fatalf("%s: %d results, want %d", m.name, len(out), n)
		}
		for i, v := range out {
			if !bytes.Equal(v, bigResult(i)) {
				t.Fatalf("%s: result %d is wrong", m.name, i)
			}
		}
		for r, slots := range st.Sizes {
			for s, z := range slots {
				if r != 0 && z.Max > bytesCapLimit/smallItemsResultBytes-1 {
					t.Errorf("%s: rank %d slot %d had a batch of %d items (%+v), want at most %d under a %d-byte bound",
						m.name, r, s, z.Max, z, bytesCapLimit/smallItemsResultBytes-1, bytesCapLimit)
				}
			}
		}
		if fs.result > bytesCapLimit {
			t.Errorf("%s: a RESULT of %d bytes, bound %d", m.name, fs.result, bytesCapLimit)
		}
		t.Logf("%s: batch sizes %v; largest RESULT %d bytes (traced: %v)", m.name, st.Sizes, fs.result, traceOn)
	}
}
