package lanes_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/hataori/hataori-go/lanes"
)

// gonumWorkspace is the benchmark's engine: the workload of the
// lanes-gonum example (examples/lanes-gonum/workspace), copied here so
// that the core package's tests import no example. For a seed, it returns
// the largest eigenvalue of AᵀA for a random n×n matrix A, with every
// buffer (A, AᵀA, eigenvalues, the LAPACK work buffer, the random source)
// allocated once. Not safe for concurrent use: one lane's engine.
type gonumWorkspace struct {
	n    int
	src  *rand.PCG
	rng  *rand.Rand
	a    *mat.Dense
	gram *mat.SymDense
	w    []float64
	work []float64
}

// newGonumWorkspace returns a workspace for n×n matrices (n ≥ 1).
func newGonumWorkspace(n int) (*gonumWorkspace, error) {
	if n < 1 {
		return nil, fmt.Errorf("workspace: matrix size %d, want at least 1", n)
	}
	src := rand.NewPCG(0, 0)
	ws := &gonumWorkspace{
		n: n, src: src, rng: rand.New(src),
		a: mat.NewDense(n, n, nil), gram: mat.NewSymDense(n, nil), w: make([]float64, n),
	}
	query := []float64{0}
	lapack64.Syev(lapack.EVNone, ws.gram.RawSymmetric(), ws.w, query, -1)
	ws.work = make([]float64, int(query[0]))
	return ws, nil
}

// TopEigen draws A from seed (entries uniform in [-1, 1)), forms AᵀA in
// place and returns its largest eigenvalue, checked against the invariant
// that the eigenvalues sum to ‖A‖²_F.
func (ws *gonumWorkspace) TopEigen(seed uint64) (float64, error) {
	ws.src.Seed(seed, 0x9e3779b97f4a7c15)
	frob := 0.0
	for i, data := 0, ws.a.RawMatrix().Data; i < len(data); i++ {
		v := 2*ws.rng.Float64() - 1
		data[i] = v
		frob += v * v
	}
	ws.gram.SymOuterK(1, ws.a.T())
	if !lapack64.Syev(lapack.EVNone, ws.gram.RawSymmetric(), ws.w, ws.work, len(ws.work)) {
		return 0, fmt.Errorf("workspace: eigen-solver did not converge for seed %d", seed)
	}
	sum := 0.0
	for _, v := range ws.w {
		sum += v
	}
	if math.Abs(sum-frob) > 1e-9*frob {
		return 0, fmt.Errorf("workspace: seed %d: eigenvalues sum to %g, want ‖A‖²_F = %g", seed, sum, frob)
	}
	return ws.w[ws.n-1], nil
}

// BenchmarkMapInLanesGonum measures, in the same run, the lanes-gonum
// workload (eigenvalues of AᵀA for random 96×96 matrices, one seed per
// item) two ways: a plain loop over one workspace, and MapInLanes over two
// lanes of two workspaces. Every iteration times both, alternating, so the
// speed-up metric compares measurements taken under the same machine load.
func BenchmarkMapInLanesGonum(b *testing.B) {
	const n, items = 96, 32
	engines := make([]*gonumWorkspace, 2)
	for i := range engines {
		ws, err := newGonumWorkspace(n)
		if err != nil {
			b.Fatal(err)
		}
		engines[i] = ws
	}
	l, err := lanes.New(engines)
	if err != nil {
		b.Fatal(err)
	}
	seeds := make([]uint64, items)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	loopOut := make([]float64, items)
	var loopTime, lanesTime time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for i, s := range seeds {
			v, err := engines[0].TopEigen(s)
			if err != nil {
				b.Fatal(err)
			}
			loopOut[i] = v
		}
		loopTime += time.Since(start)

		start = time.Now()
		got, err := lanes.MapInLanes(context.Background(), l, seeds, func(s uint64, ws *gonumWorkspace) (float64, error) {
			return ws.TopEigen(s)
		})
		lanesTime += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		for i := range got {
			if got[i] != loopOut[i] {
				b.Fatalf("item %d: lanes %g, loop %g", i, got[i], loopOut[i])
			}
		}
	}
	iters := float64(b.N)
	b.ReportMetric(float64(loopTime.Nanoseconds())/iters/items, "loop-ns/item")
	b.ReportMetric(float64(lanesTime.Nanoseconds())/iters/items, "lanes2-ns/item")
	b.ReportMetric(float64(loopTime)/float64(lanesTime), "speedup")
}
