//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// prefetchRounds is the number of interleaved off/on rounds per workload:
// the seed's gate asks for at least seven.
const prefetchRounds = 7

// busyFor spins the calling goroutine for d of wall time (CPU-bound work
// whose cost does not depend on calibration).
func busyFor(d time.Duration) {
	for t := time.Now(); time.Since(t) < d; {
	}
}

// prefetchWorkload is one of the gate's workloads: n items at batch 1.
type prefetchWorkload struct {
	name string
	n    int
	f    func(x int) ([]float64, error)
}

// prefetchGate measures bounded prefetch against the default, in the
// configuration a user writes from the README (NewLocalDomain with Outer on
// every rank, batch 1), for the seed's gate workloads: latency-bound small
// items, compute-heavy items and small payloads. Off and on alternate
// round by round; the medians and their ratio are printed with the items
// each rank ran. The seed enables prefetch by default only if the median
// improves by at least 10% on the latency-bound case and regresses by at
// most 5% elsewhere.
func prefetchGate(e *env) error {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()
	small := make([]float64, 128) // 1 KiB
	workloads := []prefetchWorkload{
		{"latency-bound: 2,000 items of 20 µs CPU", 2000, func(x int) ([]float64, error) { busyFor(20 * time.Microsecond); return nil, nil }},
		{"compute-heavy: 200 items of 2 ms CPU", 200, func(x int) ([]float64, error) { busyFor(2 * time.Millisecond); return nil, nil }},
		{"small payloads: 2,000 items of 20 µs returning 1 KiB", 2000, func(x int) ([]float64, error) {
			busyFor(20 * time.Microsecond)
			return small, nil
		}},
	}
	e.printf("prefetch gate (%d ranks, NewLocalDomain + Outer on every rank, %d workers on rank 0, batch 1, %d interleaved rounds, median)\n",
		e.size, d.Workers(), prefetchRounds)
	for _, w := range workloads {
		var off, on []float64
		var stOff, stOn hataori.CallStats
		for round := 0; round < prefetchRounds; round++ {
			for _, pf := range []bool{false, true} {
				runtime.GC()
				if err := e.world.Barrier(); err != nil {
					return err
				}
				var st hataori.CallStats
				t0 := time.Now()
				_, err := hataori.Pmap(ctx, e.world, d, hataori.Options{Mode: hataori.Outer, Prefetch: pf, Stats: &st}, e.items(w.n), w.f)
				el := time.Since(t0)
				if err != nil {
					return err
				}
				if pf {
					on, stOn = append(on, ms(el)), st
				} else {
					off, stOff = append(off, ms(el)), st
				}
			}
		}
		mOff, mOn := median(off), median(on)
		e.printf("  %s\n", w.name)
		e.printf("    off %8.2f ms   items per rank %v, per slot %s\n", mOff, rankTotals(stOff), slotsOf(stOff.Items))
		e.printf("    on  %8.2f ms   items per rank %v, per slot %s\n", mOn, rankTotals(stOn), slotsOf(stOn.Items))
		e.printf("    on/off %.3f (%s)\n", mOn/mOff, verdict(mOn/mOff))
	}
	return nil
}

func verdict(r float64) string {
	switch {
	case r <= 0.90:
		return fmt.Sprintf("%.0f%% better", 100*(1-r))
	case r <= 1.05:
		return "within 5%"
	default:
		return fmt.Sprintf("%.0f%% worse", 100*(r-1))
	}
}
