//go:build mpirt || mpicgo

package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// skewDurations returns 64 heavy-tailed (Pareto, alpha 1.2) durations in a
// fixed pseudo-random order, scaled so that they sum to total.
func skewDurations(total time.Duration) []time.Duration {
	rng := rand.New(rand.NewPCG(7, 11))
	raw := make([]float64, 64)
	sum := 0.0
	for i := range raw {
		raw[i] = math.Min(math.Pow(1-rng.Float64(), -1/1.2), 60)
		sum += raw[i]
	}
	out := make([]time.Duration, len(raw))
	for i, r := range raw {
		out[i] = time.Duration(float64(total) * r / sum)
	}
	return out
}

// greedy is the makespan of list scheduling the durations, in order, on
// lanes identical machines with zero overhead.
func greedy(ds []time.Duration, lanes int) time.Duration {
	free := make([]time.Duration, lanes)
	for _, d := range ds {
		i := slices.Index(free, slices.Min(free))
		free[i] += d
	}
	return slices.Max(free)
}

func skew(e *env) error {
	ds := skewDurations(2 * time.Second)
	var total, longest time.Duration
	for _, d := range ds {
		total += d
		longest = max(longest, d)
	}
	ideal := max(total/time.Duration(e.size), longest)
	greedyT := greedy(ds, e.size)

	// Pmap: the root is hybrid (a one-worker domain, so its coordinator
	// keeps servicing MPI while its own item sleeps); the other ranks are
	// MPI-only (their items sleep on the coordinator, which has nothing
	// else to do meanwhile).
	var d *hataori.Domain
	if e.rank == 0 {
		var err error
		if d, err = hataori.NewDomain(hataori.DomainConfig{Workers: 1, Placement: hataori.Declared}); err != nil {
			return err
		}
		defer d.Close()
	}
	if err := e.world.Barrier(); err != nil {
		return err
	}
	start := time.Now()
	// Each item returns how long it actually slept, so that the greedy
	// schedule can also be computed over the real durations.
	actual, err := hataori.Pmap(ctx, e.world, d, hataori.Options{Mode: hataori.Sequential}, e.items(len(ds)),
		func(i int) (time.Duration, error) {
			t0 := time.Now()
			time.Sleep(ds[i])
			return time.Since(t0), nil
		})
	if err != nil {
		return err
	}
	pmapT := time.Since(start)

	// Static contiguous split, executed for real: rank r sleeps its share.
	if err := e.world.Barrier(); err != nil {
		return err
	}
	start = time.Now()
	lo, hi := e.rank*len(ds)/e.size, (e.rank+1)*len(ds)/e.size
	for _, d := range ds[lo:hi] {
		time.Sleep(d)
	}
	if err := e.world.Barrier(); err != nil {
		return err
	}
	staticT := time.Since(start)

	var staticModel time.Duration
	for r := range e.size {
		var sum time.Duration
		for _, d := range ds[r*len(ds)/e.size : (r+1)*len(ds)/e.size] {
			sum += d
		}
		staticModel = max(staticModel, sum)
	}
	e.printf("skew (%d items, %d ranks): total %v, longest %v\n", len(ds), e.size, total.Round(time.Millisecond), longest.Round(time.Millisecond))
	e.printf("  ideal max(total/ranks, longest) %v; greedy schedule %v; static split %v; Pmap %v\n",
		ideal.Round(time.Millisecond), greedyT.Round(time.Millisecond), staticT.Round(time.Millisecond), pmapT.Round(time.Millisecond))
	e.printf("  static split: %v by the model, %v measured: sleeping overshoots by %.1f%% here\n",
		staticModel.Round(time.Millisecond), staticT.Round(time.Millisecond), 100*(ratio(staticT, staticModel)-1))
	if e.rank == 0 {
		greedyReal := greedy(actual, e.size)
		e.printf("  greedy schedule over the durations the items really slept: %v\n", greedyReal.Round(time.Millisecond))
		e.printf("  Pmap/ideal %.3f  Pmap/greedy %.3f  Pmap/greedy(real durations) %.3f  static/Pmap %.2fx  (aim: <= 1.10 and >= 1.30)\n",
			ratio(pmapT, ideal), ratio(pmapT, greedyT), ratio(pmapT, greedyReal), ratio(staticT, pmapT))
	}
	return nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
