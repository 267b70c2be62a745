//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/scripts/bench/internal/stats"
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

// skewVariant is one configuration of the skew case.
type skewVariant struct {
	name  string
	dom   *hataori.Domain
	batch int // Options.BatchSize (0: automatic, the zero Options)
	// per round
	vsGreedy, vsIdeal, static []float64     // static: static split / Pmap
	pmapT                     time.Duration // this round's call
	last                      hataori.CallStats
	slots                     int
}

// skew runs the heavy-tailed sleep items in the two user configurations
// (MPI-only: nil domain on every rank; hybrid: NewLocalDomain on every
// rank), with the zero Options (automatic batch sizes, Mode Auto: the
// figure) and every other batch size of -batches (for comparison),
// rounds times, each round
// also executing the static contiguous split over the ranks for real.
// Every slot is a machine: the zero-overhead greedy schedule (list
// scheduling in input order onto the first free machine, as Pmap deals)
// is computed over the total slot count of the call (the sum over ranks,
// from Options.Stats), and over the durations the items really slept in
// that call, so that sleep overshoot is not charged to Pmap.
func skew(e *env) error {
	ds := skewDurations(2 * time.Second)
	var total, longest time.Duration
	for _, d := range ds {
		total += d
		longest = max(longest, d)
	}
	d, err := e.openDomain(fmt.Sprintf("skew (%d items, batch sizes %v (auto: the zero Options), %d ranks, %d rounds): total %v, longest %v", len(ds), cpuBatches, e.size, rounds,
		total.Round(time.Millisecond), longest.Round(time.Millisecond)))
	if err != nil {
		return err
	}
	defer d.Close()
	var variants []*skewVariant
	for _, b := range cpuBatches {
		variants = append(variants, &skewVariant{name: "mpi-only", batch: b}, &skewVariant{name: "hybrid", dom: d, batch: b})
	}
	var staticRuns []time.Duration
	for round := 1; round <= rounds; round++ {
		for _, v := range variants {
			if err := e.world.Barrier(); err != nil {
				return err
			}
			var st hataori.CallStats
			start := time.Now()
			// Each item returns when it started and ended (wall clock:
			// every rank runs on this host) and how long it slept.
			spans, err := hataori.Pmap(ctx, e.world, v.dom, hataori.Options{BatchSize: v.batch, Stats: &st}, e.items(len(ds)),
				func(i int) ([2]int64, error) {
					t0 := time.Now()
					time.Sleep(ds[i])
					return [2]int64{t0.UnixNano(), time.Now().UnixNano()}, nil
				})
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			pmapT := time.Since(start)
			if e.rank != 0 {
				continue
			}
			v.slots = totalSlots(st)
			v.last = st
			actual := make([]time.Duration, len(spans))
			var real time.Duration
			var lastEnd, lastStart time.Duration
			firstStart := time.Duration(1 << 62)
			for i, sp := range spans {
				firstStart = min(firstStart, time.Duration(sp[0]-start.UnixNano()))
				actual[i] = time.Duration(sp[1] - sp[0])
				real += actual[i]
				lastEnd = max(lastEnd, time.Duration(sp[1]-start.UnixNano()))
				lastStart = max(lastStart, time.Duration(sp[0]-start.UnixNano()))
			}
			greedyReal := greedy(actual, v.slots)
			idealReal := max(real/time.Duration(v.slots), slices.Max(actual))
			v.vsGreedy = append(v.vsGreedy, ratio(pmapT, greedyReal))
			v.vsIdeal = append(v.vsIdeal, ratio(pmapT, idealReal))
			e.printf("  round %d %-8s %-4s Pmap %v; greedy on %d machines (= total slots) over the slept durations %v: Pmap/greedy %.3f; Pmap/ideal %.3f; first item started at %v, last at %v; last item ended at %v, %v before the return; items per rank %v, per slot %s; batch sizes per rank %s, per slot %s; slots busy/idle %s\n",
				round, v.name, batchName(v.batch), pmapT.Round(time.Millisecond), v.slots, greedyReal.Round(time.Millisecond),
				ratio(pmapT, greedyReal), ratio(pmapT, idealReal), firstStart.Round(100*time.Microsecond), lastStart.Round(time.Millisecond), lastEnd.Round(time.Millisecond),
				(pmapT - lastEnd).Round(100*time.Microsecond), rankTotals(st), slotsOf(st.Items), rankSizes(st.Sizes), sizesOf(st.Sizes), busyIdleOf(st))
			v.pmapT = pmapT
		}

		// Static contiguous split over the ranks, executed for real: rank
		// r sleeps its share, one item after another.
		if err := e.world.Barrier(); err != nil {
			return err
		}
		start := time.Now()
		lo, hi := e.rank*len(ds)/e.size, (e.rank+1)*len(ds)/e.size
		for _, d := range ds[lo:hi] {
			time.Sleep(d)
		}
		if err := e.world.Barrier(); err != nil {
			return err
		}
		staticT := time.Since(start)
		staticRuns = append(staticRuns, staticT)
		for _, v := range variants {
			v.static = append(v.static, ratio(staticT, v.pmapT))
		}
		e.printf("  round %d static split over %d ranks %v\n", round, e.size, staticT.Round(time.Millisecond))
	}
	if e.rank != 0 {
		return nil
	}
	var staticModel time.Duration
	for r := range e.size {
		var sum time.Duration
		for _, d := range ds[r*len(ds)/e.size : (r+1)*len(ds)/e.size] {
			sum += d
		}
		staticModel = max(staticModel, sum)
	}
	e.printf("  static split: %v by the model, median %v measured\n", staticModel.Round(time.Millisecond),
		stats.Median(staticRuns).Round(time.Millisecond))
	for _, v := range variants {
		aim := "comparison for auto, no aim"
		if v.batch == 0 {
			aim = "aim <= 1.03: " + met(median(v.vsGreedy) <= 1.03)
		}
		e.printf("  skew %-8s %-4s %d ranks, %d slots = greedy machines: median Pmap/greedy(slept durations, %d machines) %.3f (min %.3f, max %.3f; %s), Pmap/ideal %.3f, static/Pmap %.2fx (aim >= 1.30); items per rank (last round) %v, per slot %s; batch sizes per rank min/median/max×batches (last round) %s\n",
			v.name, batchName(v.batch), e.size, v.slots, v.slots, median(v.vsGreedy), slices.Min(v.vsGreedy), slices.Max(v.vsGreedy), aim,
			median(v.vsIdeal), median(v.static), rankTotals(v.last), slotsOf(v.last.Items), rankSizes(v.last.Sizes))
	}
	return nil
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
