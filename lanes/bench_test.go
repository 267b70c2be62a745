package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/hataori/hataori-go/internal/workspace"
	"github.com/hataori/hataori-go/lanes"
)

// BenchmarkMapInLanesGonum measures, in the same run, the lanes-gonum
// workload (eigenvalues of AᵀA for random 96×96 matrices, one seed per
// item) two ways: a plain loop over one workspace, and MapInLanes over two
// lanes of two workspaces. Every iteration times both, alternating, so the
// speed-up metric compares measurements taken under the same machine load.
func BenchmarkMapInLanesGonum(b *testing.B) {
	const n, items = 96, 32
	engines := make([]*workspace.Workspace, 2)
	for i := range engines {
		ws, err := workspace.New(n)
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
		got, err := lanes.MapInLanes(context.Background(), l, seeds, func(s uint64, ws *workspace.Workspace) (float64, error) {
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
