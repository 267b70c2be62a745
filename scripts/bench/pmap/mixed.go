//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

const (
	mixedTotal  = 2 * time.Second        // nominal CPU time of the items, in all
	mixedMin    = 10 * time.Microsecond  // the cheapest item
	mixedMax    = 10 * time.Millisecond  // the dearest item
	mixedMedian = 150 * time.Microsecond // the lognormal's median
	mixedSigma  = 1.6                    // the lognormal's sigma
)

// mixedCosts returns the mixed workload's nominal CPU costs: a lognormal
// (median mixedMedian, sigma mixedSigma) from a fixed seed, clamped to
// [mixedMin, mixedMax], drawn until they sum to mixedTotal. The draws are
// independent, so the input is shuffled: heavy items come anywhere, the
// last ones too. With these parameters: about 3,700 items, a mean near
// 0.5 ms, some 15 items at the 10 ms clamp.
func mixedCosts() []time.Duration {
	rng := rand.New(rand.NewPCG(20, 5))
	var out []time.Duration
	var sum time.Duration
	for sum < mixedTotal {
		d := time.Duration(float64(mixedMedian) * math.Exp(mixedSigma*rng.NormFloat64()))
		d = min(max(d, mixedMin), mixedMax)
		out = append(out, d)
		sum += d
	}
	return out
}

// mixedVariant is one configuration of the mixed case.
type mixedVariant struct {
	name  string
	dom   *hataori.Domain
	batch int
	// per round: Pmap ÷ greedy, ÷ greedy over the wall times on the slots,
	// ÷ the ideal bound, ÷ the nominal CPU time over the machines; the
	// measured (wall) total ÷ the nominal one
	vsGreedy, vsWall, vsIdeal, vsNominal, inflation []float64
	vsCounter                                       []float64     // per round: Pmap ÷ the shared counter's time
	pmapT                                           time.Duration // this round's call
	last                                            hataori.CallStats
	slots, machines                                 int
	what                                            string // the machines and durations of greedy
}

// mixed runs CPU-bound items of 10 µs to 10 ms (mixedCosts: heavy-tailed,
// shuffled, about 2 s of CPU in all; each item spins k·cost/20 µs rounds
// of spin, k calibrated once on rank 0) in the two user configurations
// (MPI-only: nil domain on every rank; hybrid: NewLocalDomain on every
// rank, the zero Mode), with the zero Options (the figure) and every other
// batch size of -batches (for comparison), rounds times, interleaved. The
// baseline is greedy: the zero-overhead list schedule of the items'
// measured durations, in input order, each onto the first free of as many
// machines as can compute at once, as in the skew case. Each item
// measures its own duration in its callback, first to last instruction:
// its wall time (what it took where it ran, time-sharing of its core
// included) and its thread's CPU time. While the call's slots (the sum
// over the ranks, CallStats) are at most the ranks' CPUs, the machines are
// the slots and the durations the wall times. With more slots than CPUs
// (4 ranks on 2 cores) the machines are the CPUs and the durations the CPU
// times: there an item's wall time counts the time its core served other
// slots, and by a varying share (a slot alone on a core for a while runs
// its items at full speed), so greedy over wall times on the slots is no
// schedule that could happen and falls below what the cores can do; that
// wall-time figure is still printed. The figure is Pmap's wall time ÷
// greedy (aim <= 1.05); also printed: ÷ the ideal bound max(sum/machines,
// longest), ÷ the nominal CPU time over the machines, and the measured
// total ÷ the nominal one (above 1: the items' cores were shared, with
// the coordinators or with neighbours). The CPUs are those some rank may
// run on (unionCPUs): every rank of these runs is on one node. Every
// round also deals the items through a shared counter (sharedCounter: the
// bound of any dealing on the node) and prints its time ÷ its own greedy,
// and every configuration's Pmap ÷ that time.
func mixed(e *env) error {
	costs := mixedCosts()
	kk := uint64(0)
	if e.rank == 0 {
		kk = uint64(calibrate(20 * time.Microsecond))
	}
	kk, err := e.bcastUint64(kk)
	if err != nil {
		return err
	}
	k20 := float64(kk)
	ks := make([]int, len(costs))
	var total time.Duration
	for i, c := range costs {
		ks[i] = max(1, int(k20*float64(c)/float64(20*time.Microsecond)))
		total += c
	}
	cpus, err := e.unionCPUs()
	if err != nil {
		return err
	}
	d, err := e.openDomain(fmt.Sprintf("mixed (%d CPU items of %v to %v, lognormal median %v sigma %.1f, shuffled, nominal total %v, longest %v; batch sizes %v (auto: the zero Options), %d ranks, %d rounds)",
		len(costs), mixedMin, mixedMax, mixedMedian, mixedSigma, total.Round(time.Millisecond), slices.Max(costs), cpuBatches, e.size, rounds))
	if err != nil {
		return err
	}
	defer d.Close()
	ctr, err := e.openCounter(len(ks))
	if err != nil {
		return fmt.Errorf("shared counter: %w", err)
	}
	defer ctr.close()
	var counterVsGreedy []float64 // per round
	var variants []*mixedVariant
	for _, b := range cpuBatches {
		variants = append(variants, &mixedVariant{name: "mpi-only", batch: b}, &mixedVariant{name: "hybrid", dom: d, batch: b})
	}
	for round := 0; round <= rounds; round++ { // round 0 is a warm-up
		for j := range variants {
			v := variants[(j+round)%len(variants)]
			if err := e.world.Barrier(); err != nil {
				return err
			}
			var st hataori.CallStats
			var itemsCPU atomic.Int64 // this rank's items' thread CPU time
			m := meterCall()
			start := time.Now()
			out, err := hataori.Pmap(ctx, e.world, v.dom, hataori.Options{BatchSize: v.batch, Stats: &st}, e.items(len(costs)),
				func(i int) ([3]uint64, error) {
					runtime.LockOSThread() // the thread's CPU clock must be one thread's
					defer runtime.UnlockOSThread()
					t0, c0 := time.Now(), threadCPU()
					h := spin(ks[i], uint64(i))
					c := threadCPU() - c0
					itemsCPU.Add(int64(c))
					return [3]uint64{uint64(time.Since(t0)), uint64(c), h}, nil
				})
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			pmapT := time.Since(start)
			beyond, report, err := e.metered(m, pmapT, time.Duration(itemsCPU.Load()))
			if err != nil {
				return err
			}
			for r, l := range report {
				e.printf("      %s rank %d threads during the call: %s\n", v.name, r, l)
			}
			if round == 0 || e.rank != 0 {
				continue
			}
			v.slots = totalSlots(st)
			v.last = st
			wall, cpu := make([]time.Duration, len(out)), make([]time.Duration, len(out))
			for i, o := range out {
				wall[i], cpu[i] = time.Duration(o[0]), time.Duration(o[1])
			}
			gs := mixedGreedy(wall, cpu, v.slots, cpus)
			gWall := greedy(wall, v.slots)
			ideal := max(gs.sum/time.Duration(gs.machines), gs.longest)
			nominal := total / time.Duration(gs.machines)
			v.machines, v.what, v.pmapT = gs.machines, gs.what, pmapT
			v.vsGreedy = append(v.vsGreedy, ratio(pmapT, gs.g))
			v.vsWall = append(v.vsWall, ratio(pmapT, gWall))
			v.vsIdeal = append(v.vsIdeal, ratio(pmapT, ideal))
			v.vsNominal = append(v.vsNominal, ratio(pmapT, nominal))
			v.inflation = append(v.inflation, ratio(gs.sumWall, total))
			e.printf("  round %d %-8s %-4s Pmap %v; greedy on %d machines (%s; sum %v) %v: Pmap/greedy %.3f, Pmap/ideal %.3f, Pmap/(nominal CPU ÷ machines) %.3f; greedy on the %d slots over the wall times (sum %v) %v: Pmap/that %.3f; items per rank %v, per slot %s; batch sizes per rank %s, per slot %s; slots busy/idle %s; process CPU beyond the items per rank %v\n",
				round, v.name, batchName(v.batch), pmapT.Round(time.Millisecond), gs.machines, gs.what, gs.sum.Round(time.Millisecond), gs.g.Round(time.Millisecond),
				ratio(pmapT, gs.g), ratio(pmapT, ideal), ratio(pmapT, nominal), v.slots, gs.sumWall.Round(time.Millisecond), gWall.Round(time.Millisecond), ratio(pmapT, gWall),
				rankTotals(st), slotsOf(st.Items), rankSizes(st.Sizes), sizesOf(st.Sizes), busyIdleOf(st), roundAll(beyond, 100*time.Microsecond))
		}
		t, wall, cpu, err := ctr.run(e, ks)
		if err != nil {
			return fmt.Errorf("shared counter: %w", err)
		}
		if round == 0 || e.rank != 0 {
			continue
		}
		gs := mixedGreedy(wall, cpu, e.size, cpus)
		counterVsGreedy = append(counterVsGreedy, ratio(t, gs.g))
		for _, v := range variants {
			v.vsCounter = append(v.vsCounter, ratio(v.pmapT, t))
		}
		e.printf("  round %d shared counter (every rank takes one item at a time from shared memory: no message, no coordinator) %v; greedy on %d machines (%s; sum %v) %v: counter/greedy %.3f\n",
			round, t.Round(time.Millisecond), gs.machines, gs.what, gs.sum.Round(time.Millisecond), gs.g.Round(time.Millisecond), ratio(t, gs.g))
	}
	if e.rank != 0 {
		return nil
	}
	e.printf("  mixed shared counter %d ranks: median counter/greedy %.3f (min %.3f, max %.3f): the bound of any dealing on this node\n",
		e.size, median(counterVsGreedy), slices.Min(counterVsGreedy), slices.Max(counterVsGreedy))
	for _, v := range variants {
		aim := "comparison for auto, no aim"
		if v.batch == 0 {
			aim = "aim <= 1.05: " + met(median(v.vsGreedy) <= 1.05)
		}
		e.printf("  mixed %-8s %-4s %d ranks, %d slots, greedy machines %d (%s): median Pmap/greedy %.3f (min %.3f, max %.3f; %s), Pmap/ideal %.3f, Pmap/(nominal CPU ÷ machines) %.3f; greedy on the slots over the wall times %.3f; measured/nominal CPU %.2f; items per rank (last round) %v; batch sizes per rank min/median/max×batches (last round) %s\n",
			v.name, batchName(v.batch), e.size, v.slots, v.machines, v.what, median(v.vsGreedy), slices.Min(v.vsGreedy), slices.Max(v.vsGreedy), aim,
			median(v.vsIdeal), median(v.vsNominal), median(v.vsWall), median(v.inflation), rankTotals(v.last), rankSizes(v.last.Sizes))
		e.printf("  mixed %-8s %-4s %d ranks: median Pmap ÷ shared counter %.3f (min %.3f, max %.3f)\n",
			v.name, batchName(v.batch), e.size, median(v.vsCounter), slices.Min(v.vsCounter), slices.Max(v.vsCounter))
	}
	return nil
}

// greedyOf is the greedy baseline of one mixed run (mixedGreedy).
type greedyOf struct {
	g, sum, longest, sumWall time.Duration
	machines                 int
	what                     string // the machines and the durations
}

// mixedGreedy is the greedy schedule of one run's items over slots on
// ranks that may run on cpus CPUs: on the slots over the items' wall
// times while they are at most the CPUs, on the CPUs over their thread
// CPU times beyond (a CPU time of zero or above the wall time, where no
// per-thread clock measured it, counts as the wall time).
func mixedGreedy(wall, cpu []time.Duration, slots, cpus int) greedyOf {
	o := greedyOf{machines: slots, what: "slots, wall times"}
	ds := wall
	if slots > cpus {
		ds = make([]time.Duration, len(cpu))
		for i, c := range cpu {
			ds[i] = c
			if c <= 0 || c > wall[i] {
				ds[i] = wall[i]
			}
		}
		o.machines, o.what = cpus, "CPUs, CPU times"
	}
	for i, d := range ds {
		o.sum += d
		o.sumWall += wall[i]
		o.longest = max(o.longest, d)
	}
	o.g = greedy(ds, o.machines)
	return o
}
