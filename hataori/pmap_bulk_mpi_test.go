//go:build mpirt || mpicgo

package hataori

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// bulkSizes are the result sizes of the bulk tests, cycled by item: around
// the segment threshold (resultSegMin, 32 KiB), empty, tiny, and larger
// than 1 MiB, most of them odd.
var bulkSizes = []int{0, 1, 7, resultSegMin - 1, resultSegMin, resultSegMin + 1, 100001, 1<<20 + 3, 3}

// bulkBytes is item i's []byte result: bulkSizes[i%len] bytes derived from i.
func bulkBytes(i int) []byte {
	b := make([]byte, bulkSizes[i%len(bulkSizes)])
	for j := range b {
		b[j] = byte(i*31 + j*7 + j>>9)
	}
	return b
}

// bulkFloats is item i's []float64 result: an odd length, 32 to 126 KiB
// (at least resultSegMin: a segment each). Results above 1 MiB are
// bulkBytes'; these stay small because under -race every element costs,
// and the 4-rank MPICH jobs on 2 cores spent most of their time limit on
// megabyte results here.
func bulkFloats(i int) []float64 {
	v := make([]float64, 4096+i%5*3001+1)
	for j := range v {
		v[j] = float64(i)*1e6 + float64(j)
	}
	return v
}

// sameFloats reports whether a and b hold the same bits (bulkFloats has
// no NaN, so this is slices.Equal), comparing their bytes at once (an
// element loop is slow under -race).
func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), 8*len(a)), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 8*len(b)))
}

// nestedBulk is a result with Bulk fields, large and small, among other fields.
type nestedBulk struct {
	Name  string
	A     Bulk[float64]
	B     Bulk[int32]
	Small Bulk[uint16]
	Tail  []byte
}

func nestedOf(i int) nestedBulk {
	n := nestedBulk{Name: fmt.Sprint("item ", i), A: bulkFloats(i), B: make(Bulk[int32], 9000+i%3), Small: Bulk[uint16]{uint16(i), 2}, Tail: bulkBytes(i)[:min(10, len(bulkBytes(i)))]}
	for j := range n.B {
		n.B[j] = int32(i - j)
	}
	if i%4 == 3 {
		n.A = nil
	}
	return n
}

// TestPmapBulkResultsExact checks that bulk results crossing ranks arrive
// byte for byte, whether their data travels inside the RESULT frame or as
// segments from the result's own memory: []byte results of sizes around
// the segment threshold (empty, odd, above 1 MiB), []float64 results,
// results with nested Bulk fields, at automatic and fixed batch sizes
// (several segments per RESULT, between small values), MPI-only and
// hybrid; and under CollectAll with items failing in the middle of their
// batches, every other result exact and exactly the failed items listed.
// Some items run on another rank (the root's statistics say so; the
// root's first callbacks wait until it has dealt every other rank a batch:
// remotesFed).
func TestPmapBulkResultsExact(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapBulkResultsExact", 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	const n = 60
	for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
		for _, batch := range []int{0, 4} {
			what := fmt.Sprintf("%s batch=%d", m.name, batch)
			var st CallStats
			opts := Options{BatchSize: batch, Mode: m.mode, Stats: &st}
			fed := e.remotesFed() // rank 1's items by an event, not by timing
			bs, err := Pmap(ctx, e.world, m.d, opts, e.items(n), func(i int) ([]byte, error) {
				fed()
				return bulkBytes(i), nil
			})
			e.checkBulk(what+" []byte", err, bs, n, func(i int, b []byte) bool { return bytes.Equal(b, bulkBytes(i)) })
			if e.rank == 0 && st.Items[1][0] == 0 && slices.Equal(st.Items[1], make([]int64, len(st.Items[1]))) {
				t.Errorf("%s: rank 1 ran no item: %v", what, st.Items)
			}
			fs, err := Pmap(ctx, e.world, m.d, opts, e.items(n), func(i int) ([]float64, error) { return bulkFloats(i), nil })
			e.checkBulk(what+" []float64", err, fs, n, func(i int, v []float64) bool { return sameFloats(v, bulkFloats(i)) })
			ns, err := Pmap(ctx, e.world, m.d, opts, e.items(n), func(i int) (nestedBulk, error) { return nestedOf(i), nil })
			e.checkBulk(what+" nested", err, ns, n, func(i int, v nestedBulk) bool {
				w := nestedOf(i)
				return v.Name == w.Name && slices.Equal(v.A, w.A) && (v.A == nil) == (w.A == nil) && slices.Equal(v.B, w.B) &&
					slices.Equal(v.Small, w.Small) && bytes.Equal(v.Tail, w.Tail)
			})
		}
		e.collectAllBulk(ctx, m)
	}
	e.checkReusable("after the bulk calls")
}

// checkBulk checks on the root that err is nil and every one of the n
// results satisfies ok.
func checkBulkOf[U any](e *rankEnv, what string, err error, out []U, n int, ok func(int, U) bool) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: %v", what, err)
	}
	if e.rank != 0 {
		return
	}
	if len(out) != n {
		e.t.Fatalf("%s: %d results, want %d", what, len(out), n)
	}
	for i, u := range out {
		if !ok(i, u) {
			e.t.Errorf("%s: result %d differs", what, i)
		}
	}
}

func (e *rankEnv) checkBulk(what string, err error, out any, n int, ok any) {
	e.t.Helper()
	switch o := out.(type) {
	case [][]byte:
		checkBulkOf(e, what, err, o, n, ok.(func(int, []byte) bool))
	case [][]float64:
		checkBulkOf(e, what, err, o, n, ok.(func(int, []float64) bool))
	case []nestedBulk:
		checkBulkOf(e, what, err, o, n, ok.(func(int, nestedBulk) bool))
	default:
		e.t.Fatalf("%s: result type %T", what, out)
	}
}

// collectAllBulk: CollectAll, batches of 5, items ≡ 2 (mod 7) fail, in
// the middle of their batches: the others' []float64 results are exact,
// the failures exactly those items.
func (e *rankEnv) collectAllBulk(ctx context.Context, m execMode) {
	const n = 70
	opts := Options{BatchSize: 5, Mode: m.mode, OnError: CollectAll}
	out, err := Pmap(ctx, e.world, m.d, opts, e.items(n), func(i int) ([]float64, error) {
		if i%7 == 2 {
			return nil, fmt.Errorf("item %d refused", i)
		}
		return bulkFloats(i), nil
	})
	var pe *PmapError
	if !errors.As(err, &pe) {
		e.t.Fatalf("%s CollectAll: %v, want a *PmapError", m.name, err)
	}
	if e.rank != 0 {
		return
	}
	var failed []int
	for _, f := range pe.Failures {
		failed = append(failed, f.Index)
	}
	var want []int
	for i := range n {
		switch {
		case i%7 == 2:
			want = append(want, i)
		case !sameFloats(out[i], bulkFloats(i)):
			e.t.Errorf("%s CollectAll: result %d differs", m.name, i)
		}
	}
	if !slices.Equal(failed, want) {
		e.t.Errorf("%s CollectAll: failures %v, want %v", m.name, failed, want)
	}
}

// TestPmapStreamReuseBuffers checks Options.ReuseBuffers: with it, every
// result reaches the sink correct and stays so while the sink holds it
// (the sink checks its contents on entry and again on return, after
// letting the coordinator receive more results meanwhile), and the
// buffers of remote results are reused (a backing array seen again after
// the sink returned for it); the bound on the buffers made holds (the
// pool's count). Without it, every value stays valid after the sink
// returns (all kept and checked at the end, no two sharing memory). Pmap
// ignores the option: its results are the caller's.
func TestPmapStreamReuseBuffers(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapStreamReuseBuffers", 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	const n = 150
	f := func(_ context.Context, i int) ([]float64, error) { return bulkFloats(i), nil }
	for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
		for _, batch := range []int{1, 3} {
			what := fmt.Sprintf("%s batch=%d", m.name, batch)
			opts := Options{BatchSize: batch, Mode: m.mode, Window: 6, ReuseBuffers: true}
			seen := map[uintptr]int{}
			var bad []int
			sink := func(i int, v []float64) error {
				want := bulkFloats(i)
				if !sameFloats(v, want) {
					bad = append(bad, i)
					return nil
				}
				if i%5 == 0 {
					time.Sleep(2 * time.Millisecond) // more results arrive meanwhile
				}
				if !sameFloats(v, want) {
					bad = append(bad, -i-1) // overwritten while the sink held it
				}
				seen[uintptr(unsafe.Pointer(&v[0]))]++
				return nil
			}
			if err := e.streamFloats(ctx, m, opts, n, f, sink); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if e.rank != 0 {
				continue
			}
			if len(bad) > 0 {
				t.Errorf("%s: wrong values in the sink at %v (negative: -i-1, changed while held)", what, bad)
			}
			again := 0
			for _, c := range seen {
				if c > 1 {
					again += c - 1
				}
			}
			if again == 0 {
				t.Errorf("%s: no buffer reused over %d results (%d distinct arrays)", what, n, len(seen))
			}
			t.Logf("%s: %d of %d results in a reused buffer", what, again, n)
		}
		e.keepValues(ctx, m, f)
	}
	e.checkReusable("after the streams")
}

// keepValues: without ReuseBuffers the sink keeps every value, all valid
// after the call and none sharing memory; Pmap with ReuseBuffers likewise.
func (e *rankEnv) keepValues(ctx context.Context, m execMode, f func(context.Context, int) ([]float64, error)) {
	const n = 60
	kept := make([][]float64, n)
	opts := Options{BatchSize: 2, Mode: m.mode, Window: 4}
	if err := e.streamFloats(ctx, m, opts, n, f, func(i int, v []float64) error { kept[i] = v; return nil }); err != nil {
		e.t.Fatalf("%s keep: %v", m.name, err)
	}
	opts.ReuseBuffers = true
	out, err := PmapContext(ctx, e.world, m.d, opts, e.items(n), f)
	if err != nil {
		e.t.Fatalf("%s Pmap with ReuseBuffers: %v", m.name, err)
	}
	if e.rank != 0 {
		return
	}
	for what, vals := range map[string][][]float64{"stream without ReuseBuffers": kept, "Pmap with ReuseBuffers": out} {
		arrays := map[uintptr]bool{}
		for i, v := range vals {
			if !sameFloats(v, bulkFloats(i)) {
				e.t.Errorf("%s %s: value %d changed after the sink returned", m.name, what, i)
			}
			arrays[uintptr(unsafe.Pointer(&v[0]))] = true
		}
		if len(arrays) != n {
			e.t.Errorf("%s %s: %d values share %d arrays", m.name, what, n, len(arrays))
		}
	}
}

// streamFloats runs PmapStream over 0..n-1 with sink on the root.
func (e *rankEnv) streamFloats(ctx context.Context, m execMode, opts Options, n int, f func(context.Context, int) ([]float64, error), sink func(int, []float64) error) error {
	items := None[iter.Seq[int]]()
	if e.rank != 0 {
		sink = nil
	} else {
		items = Some(iter.Seq[int](func(yield func(int) bool) {
			for i := range n {
				if !yield(i) {
					return
				}
			}
		}))
	}
	return PmapStream(ctx, e.world, m.d, opts, items, f, sink)
}
