//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

const (
	cpuItems  = 20000                 // items per measured call
	cpuTarget = 20 * time.Microsecond // calibrated cost of one item
	cpuSerial = 5000                  // items of the serial baseline before each call
	cpuWarm   = 2000                  // items of each configuration's warm-up call
)

// spin is the CPU-bound item: k rounds of xorshift64 on a value derived
// from x, a dependency chain the compiler cannot shorten or drop (the
// result is the item's result). Deterministic: the same k and x give the
// same work and result on every rank. A call whose result is unused may
// be optimised away in part (calibrating k several times too high), so
// the calibration keeps every result.
func spin(k int, x uint64) uint64 {
	h := x*0x9E3779B97F4A7C15 + 1
	for range k {
		h ^= h << 13
		h ^= h >> 7
		h ^= h << 17
	}
	return h
}

// calibrate returns the k that makes spin cost about cpuTarget of CPU
// time on this rank: the median of 25 runs of about 2 ms, each timed by the
// thread's CPU clock, so that a neighbour taking the CPU meanwhile does
// not make the items shorter. The serial cost measured next to every call,
// not this estimate, is what every figure uses.
func calibrate() int {
	k := 1 << 12
	var acc uint64 // keeps every run's result alive (see spin)
	defer runtime.KeepAlive(&acc)
	for {
		t0 := threadCPU()
		acc += spin(k, 1)
		if threadCPU()-t0 > 2*time.Millisecond {
			break
		}
		k *= 2
	}
	runs := make([]float64, 25)
	for i := range runs {
		t0 := threadCPU()
		acc += spin(k, uint64(i))
		runs[i] = float64(threadCPU() - t0)
	}
	return max(1, int(float64(k)*float64(cpuTarget)/median(runs)))
}

func firstCPUs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// serialCost is one rank's cost per item in the serial loop: wall and
// thread CPU time.
type serialCost struct{ wall, cpu time.Duration }

// cpuEngine is a lane's engine in the cpu case: it only counts.
type cpuEngine struct{ items int64 }

// cpuConfig is one configuration of the cpu case.
type cpuConfig struct {
	name string
	call func(items hataori.Maybe[[]int], st *hataori.CallStats, g *gomaxprocsSeen) ([]uint64, error)
	eff  []float64 // per round: against the wall-clock serial loop
	// per round: against the serial loop's CPU cost (thread CPU time per
	// item): time lost to neighbours counts against it, so on a loaded
	// machine it is the conservative figure; on a quiet one the two agree
	effCPU    []float64
	rootShare []float64   // per round: fraction of the items on the root
	useful    [][]float64 // per rank, per round: useful/CPU
	// the figures of each round, for the summary
	cores, cpus, slots int
	during             int64
}

// cpuBound measures CPU-bound ~20 µs items, batch 1 (-batch), in the three user
// configurations (MPI-only, hybrid on NewLocalDomain in Outer mode, lanes
// with one engine per allowed CPU). Each round runs every configuration
// once (in an order rotated from round to round); each call is bracketed
// by its baseline: every rank runs cpuSerial items in a plain loop, all
// ranks at once, right before and right after the call (the serial cost
// per item under the same binding and the same neighbours; the mean of
// the two is used). The efficiency of the call is items × mean serial
// cost ÷ cores used ÷ wall time, where cores used is min(distinct CPUs the
// ranks may run on, slots of the call): on one core it is the call's speed
// as a fraction of the serial loop's. It is also printed against the serial
// loop's CPU cost (thread CPU time per item): on a machine shared with
// other jobs the wall-clock loop (one thread) can be starved more than the
// call (several threads per rank), which pushes the first figure above 1,
// while time lost to neighbours counts against the second; on a quiet
// machine they agree. Per rank it prints the items of every slot, the
// slots' busy fraction, the CPU time the rank got per wall second and the
// share of it the items needed (useful/CPU: the rest went to the
// coordinator, the protocol and the runtime), and with -threads every busy
// thread's CPU time, run-queue wait and wake-ups (/proc schedstat).
func cpuBound(e *env) error {
	kk := uint64(0)
	if e.rank == 0 {
		kk = uint64(calibrate())
	}
	kk, err := e.bcastUint64(kk)
	if err != nil {
		return err
	}
	k := int(kk)
	cpus, err := e.unionCPUs()
	if err != nil {
		return err
	}
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()
	engines := make([]*cpuEngine, len(allowedCPUs()))
	for i := range engines {
		engines[i] = &cpuEngine{}
	}
	l, err := lanes.New(engines)
	if err != nil {
		return err
	}
	info, err := e.rankInfo(0)
	if err != nil {
		return err
	}
	e.printf("cpu (%d items of ~%v CPU, batch %d, prefetch %v, %d ranks, %d CPUs between them, spin k=%d, %d rounds)\n",
		cpuItems, cpuTarget, cpuBatch, cpuPrefetch, e.size, cpus, k, rounds)
	for _, s := range info {
		e.printf("  %s; NewLocalDomain: %d workers; lanes: %d\n", s, d.Workers(), len(engines))
	}
	item := func(g *gomaxprocsSeen, x int) uint64 {
		g.note()
		return spin(k, uint64(x))
	}
	configs := []*cpuConfig{
		{name: "mpi-only", call: func(items hataori.Maybe[[]int], st *hataori.CallStats, g *gomaxprocsSeen) ([]uint64, error) {
			return hataori.Pmap(ctx, e.world, nil, hataori.Options{BatchSize: cpuBatch, Prefetch: cpuPrefetch, Stats: st}, items,
				func(x int) (uint64, error) { return item(g, x), nil })
		}},
		{name: "hybrid", call: func(items hataori.Maybe[[]int], st *hataori.CallStats, g *gomaxprocsSeen) ([]uint64, error) {
			return hataori.Pmap(ctx, e.world, d, hataori.Options{BatchSize: cpuBatch, Prefetch: cpuPrefetch, Mode: hataori.Outer, Stats: st}, items,
				func(x int) (uint64, error) { return item(g, x), nil })
		}},
		{name: "lanes", call: func(items hataori.Maybe[[]int], st *hataori.CallStats, g *gomaxprocsSeen) ([]uint64, error) {
			return lanes.PmapLanes(ctx, e.world, l, hataori.Options{BatchSize: cpuBatch, Prefetch: cpuPrefetch, Stats: st}, items,
				func(x int, eng *cpuEngine) (uint64, error) { eng.items++; return item(g, x), nil })
		}},
	}
	if only != "" {
		configs = slices.DeleteFunc(configs, func(c *cpuConfig) bool {
			return !slices.Contains(strings.Split(only, ","), c.name)
		})
	}
	// Warm-up: one short call per configuration (threads, GOMAXPROCS).
	for _, c := range configs {
		var g gomaxprocsSeen
		var st hataori.CallStats
		if _, err := c.call(e.items(cpuWarm), &st, &g); err != nil {
			return fmt.Errorf("%s warm-up: %w", c.name, err)
		}
		c.slots = totalSlots(st)
		c.during = g.v.Load()
		c.cpus = cpus
		c.cores = min(cpus, c.slots)
		info, err := e.rankInfo(c.during)
		if err != nil {
			return err
		}
		e.printf("  %-8s %d slots in all; during the call: %s\n", c.name, c.slots, strings.Join(info, "; "))
	}
	ref := make([]uint64, cpuSerial)
	// serial runs the baseline, the plain loop, on every rank at once, and
	// returns (on rank 0) every rank's cost per item.
	serial := func() ([]serialCost, error) {
		if err := e.world.Barrier(); err != nil {
			return nil, err
		}
		t0, c0 := time.Now(), threadCPU()
		for i := range ref {
			ref[i] = spin(k, uint64(i))
		}
		wall, cpu := time.Since(t0)/cpuSerial, (threadCPU()-c0)/cpuSerial
		all, err := e.gather(fmt.Sprint(int64(wall), int64(cpu)))
		var out []serialCost
		for _, s := range all {
			var c serialCost
			fmt.Sscan(s, &c.wall, &c.cpu)
			out = append(out, c)
		}
		return out, err
	}
	for round := 1; round <= rounds; round++ {
		for j := range configs {
			// Rotate the order from round to round, so that no
			// configuration always follows the same neighbour.
			c := configs[(j+round-1)%len(configs)]
			// The baseline brackets the call: the serial loop right
			// before and right after it, under the same binding and the
			// same neighbours.
			before, err := serial()
			if err != nil {
				return err
			}
			var g gomaxprocsSeen
			var st hataori.CallStats
			if err := e.world.Barrier(); err != nil {
				return err
			}
			sched0 := threadSched()
			t0, cpu0 := time.Now(), processCPU()
			out, err := c.call(e.items(cpuItems), &st, &g)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			wall := time.Since(t0)
			// The CPU time the rank's threads got during the call (every
			// thread: slots and coordinator), as a share of the wall time:
			// a rank bound to one core that gets less than 1 shared its
			// core with other processes.
			cpuUsed, err := e.gather(fmt.Sprint(int64(processCPU() - cpu0)))
			if err != nil {
				return err
			}
			var threadLines []string
			if threads {
				if threadLines, err = e.gather(threadReport(sched0, wall)); err != nil {
					return err
				}
			}
			if e.rank == 0 && (len(out) != cpuItems || !slices.Equal(out[:cpuSerial], ref)) {
				return fmt.Errorf("%s: wrong results", c.name)
			}
			after, err := serial()
			if err != nil {
				return err
			}
			if e.rank != 0 {
				continue
			}
			var sum time.Duration
			var per, busy, cpus []string
			for r := range before {
				sum += before[r].wall + after[r].wall
				per = append(per, fmt.Sprintf("r%d %.1f/%.1f (CPU %.1f/%.1f)", r, us(before[r].wall), us(after[r].wall), us(before[r].cpu), us(after[r].cpu)))
			}
			mean := sum / time.Duration(2*len(before))
			ideal := time.Duration(float64(cpuItems) * float64(mean) / float64(c.cores))
			eff := float64(ideal) / float64(wall)
			c.eff = append(c.eff, eff)
			var sumCPU time.Duration
			for r := range before {
				sumCPU += before[r].cpu + after[r].cpu
			}
			idealCPU := time.Duration(float64(cpuItems) * float64(sumCPU) / float64(2*len(before)) / float64(c.cores))
			effCPU := float64(idealCPU) / float64(wall)
			c.effCPU = append(c.effCPU, effCPU)
			totals := rankTotals(st)
			c.rootShare = append(c.rootShare, float64(totals[0])/cpuItems)
			if c.useful == nil {
				c.useful = make([][]float64, len(totals))
			}
			for r, n := range rankTotals(st) {
				// Busy fraction of the rank's slots: the serial time of the
				// items it ran ÷ (wall time × its slots); a slot that
				// waits for its next batch, or shares its core, shows here.
				cost := (before[r].wall + after[r].wall) / 2
				busy = append(busy, fmt.Sprintf("r%d %.2f", r, float64(n)*float64(cost)/float64(wall)/float64(len(st.Items[r]))))
				// The CPU time the rank's threads got during the call (all
				// of them: slots and coordinator) per wall second, and the
				// share of it the items needed (their serial CPU cost):
				// robust to neighbours, since both are CPU times. The rest
				// is the coordinator's polling and the protocol.
				var used time.Duration
				fmt.Sscan(cpuUsed[r], &used)
				useful := time.Duration(n) * (before[r].cpu + after[r].cpu) / 2
				cpus = append(cpus, fmt.Sprintf("r%d %.2f/%.2f", r, float64(used)/float64(wall), float64(useful)/float64(max(used, 1))))
				c.useful[r] = append(c.useful[r], float64(useful)/float64(max(used, 1)))
			}
			e.printf("  round %d %-8s serial before/after %s µs/item; ideal %6.1f ms on %d cores; Pmap %6.1f ms: efficiency %.3f (by CPU cost %.3f); items %s; batch sizes %s; slots busy %s; CPU/wall, useful/CPU %s\n",
				round, c.name, strings.Join(per, " "), ms(ideal), c.cores, ms(wall), eff, effCPU, slotsOf(st.Items), sizesOf(st.Sizes), strings.Join(busy, " "), strings.Join(cpus, " "))
			for r, l := range threadLines {
				e.printf("      rank %d threads during the call: %s\n", r, l)
			}
		}
	}
	if e.rank != 0 {
		return nil
	}
	for _, c := range configs {
		aim := "aim >= 0.85 of ideal"
		if c.cores == 1 {
			aim = "speed as a fraction of the serial loop's; aim >= 0.90"
		}
		var useful []string
		for r, u := range c.useful {
			useful = append(useful, fmt.Sprintf("r%d %.2f", r, median(u)))
		}
		e.printf("  cpu %-8s %d ranks, %d slots, %d CPUs, cores used %d, GOMAXPROCS during the call %d (rank 0): median efficiency %.3f (min %.3f, max %.3f), by CPU cost %.3f; %.0f%% of the items on the root; useful/CPU %s  (%s)\n",
			c.name, e.size, c.slots, c.cpus, c.cores, c.during, median(c.eff), slices.Min(c.eff), slices.Max(c.eff),
			median(c.effCPU), 100*median(c.rootShare), strings.Join(useful, " "), aim)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
