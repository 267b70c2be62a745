// Command desmodel is a discrete-event model of Pmap's dealing beyond this
// machine: one root coordinator that handles every message in turn, R
// ranks of S slots, the per-message costs measured here (DefaultCosts says
// where each comes from), a modelled clock, and the real scheduler
// (internal/sched: the root's Scheduler and every remote rank's Remote)
// deciding every batch.
//
// It prints, for 64 to 16,384 slots over 1 to 256 ranks, each batch
// policy and item cost distribution, the root's dealing rate, the
// throughput against the ideal and the root's utilisation (the grid), and
// a scan over the slot count that finds where the dealer saturates; it
// draws the scan (gonum.org/v1/plot) to -png:
//
//	go run ./scripts/desmodel -png docs/img/desmodel.png
//
// The automatic policy is sched.Config.BatchSize == 0 with every
// completion's sched.Timing (auto.go). It is a separate
// main package, so gonum/plot stays out of hataori's and lanes'
// dependencies.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// policies are the batch policies modelled: fixed 1, 16, 256, and the
// scheduler's automatic sizes (with its prefetch verdict).
func policies() []Policy {
	return []Policy{{Name: "batch 1", Batch: 1}, {Name: "batch 16", Batch: 16}, {Name: "batch 256", Batch: 256}, {Name: "auto", Batch: 0}}
}

// itemsFor is the item count of a modelled call: rounds batches per slot
// at a fixed size (so every fixed policy reaches a steady state), and for
// the automatic policy as many items as batch 16 gets (its factoring cap,
// remaining / (2·slots), starts at 8·rounds items).
func itemsFor(slots int, p Policy, rounds int) int {
	b := p.Batch
	if b <= 0 {
		b = 16
	}
	return max(rounds*slots*b, 4096)
}

func main() {
	png := flag.String("png", "", "draw the saturation scan to this PNG")
	grid := flag.Bool("grid", true, "model the grid (64–16,384 slots × 1–256 ranks)")
	scan := flag.Bool("scan", true, "scan the slot count for the saturation points")
	rounds := flag.Int("rounds", 4, "batches per slot at a fixed size")
	workers := flag.Int("j", runtime.GOMAXPROCS(0), "runs modelled at once")
	full := flag.Bool("full", false, "grid over 1, 4, 16, 64, 256 ranks (default 1, 16, 256)")
	flag.Parse()
	t0 := time.Now()
	c := DefaultCosts()
	w := os.Stdout
	fmt.Fprintf(w, "Costs: recv %s, send %s per message; enc %s, dec %s per item; lock %s; hop %s; hand-off %s\n",
		us(c.Recv), us(c.Send), us(c.Enc), us(c.Dec), us(c.Lock), us(c.Hop), us(c.Handoff))
	fmt.Fprintf(w, "Root per remote batch of n items: %s + n × %s (capacity at batch 1: %.0f batches/s)\n\n",
		us(c.RootPerBatch(0)), us(c.Enc+c.Dec), 1e9/float64(c.RootPerBatch(1)))
	var events int64
	if *grid {
		var cfgs []Config
		for _, d := range AllDists {
			for _, slots := range []int{64, 256, 1024, 4096, 16384} {
				rs := []int{1, 16, 256}
				if *full {
					rs = []int{1, 4, 16, 64, 256}
				}
				for _, ranks := range rs {
					if ranks > slots {
						continue
					}
					for _, p := range policies() {
						cfgs = append(cfgs, Config{Ranks: ranks, SlotsPerRank: slots / ranks, Items: itemsFor(slots, p, *rounds), Dist: d, Policy: p, Costs: c})
					}
				}
			}
		}
		res := runAll(cfgs, *workers)
		events += printGrid(w, res)
	}
	if *scan {
		var cfgs []Config
		for _, d := range AllDists {
			for slots := 1; slots <= 16384; slots *= 2 {
				ranks := min(slots, 256)
				for _, p := range policies() {
					cfgs = append(cfgs, Config{Ranks: ranks, SlotsPerRank: slots / ranks, Items: itemsFor(slots, p, *rounds), Dist: d, Policy: p, Costs: c})
				}
			}
		}
		res := runAll(cfgs, *workers)
		events += printScan(w, res)
		if *png != "" {
			if err := drawScan(res, *png); err != nil {
				fmt.Fprintln(os.Stderr, "desmodel:", err)
				os.Exit(1)
			}
			fmt.Fprintf(w, "\nwrote %s\n", *png)
		}
	}
	fmt.Fprintf(w, "\n%d events modelled in %.1f s\n", events, time.Since(t0).Seconds())
}

// runAll models cfgs on workers goroutines and returns the results in
// cfgs' order; it exits on the first model error.
func runAll(cfgs []Config, workers int) []Result {
	out := make([]Result, len(cfgs))
	// Largest first, so the long runs do not end the sweep alone.
	order := make([]int, len(cfgs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return cost(cfgs[order[a]]) > cost(cfgs[order[b]])
	})
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for i := range next {
				r, err := Run(cfgs[i])
				if err != nil {
					fmt.Fprintf(os.Stderr, "desmodel: %+v: %v\n", cfgs[i], err)
					os.Exit(1)
				}
				out[i] = r
			}
		})
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// cost estimates a run's modelling cost: its batches, plus its items.
func cost(c Config) int {
	b := max(c.Policy.Batch, 16)
	return c.Items/b*10 + c.Items/8
}

func rate(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.0fk", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// printGrid prints the grid as one markdown table per distribution.
func printGrid(w io.Writer, res []Result) int64 {
	var events int64
	var dist string
	for _, r := range res {
		events += r.Events
		if r.Dist.Name != dist {
			dist = r.Dist.Name
			fmt.Fprintf(w, "\n### Grid, items %s\n\n", dist)
			fmt.Fprintln(w, "| slots | ranks × slots | policy | batches/s dealt (remote) | items/s | throughput ÷ ideal (whole call) | root coordinator busy | lock busy | busy slots |")
			fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
		}
		fmt.Fprintf(w, "| %d | %d × %d | %s | %s (%s) | %s | %.3f (%.3f) | %.2f | %.2f | %.0f |\n",
			r.Slots(), r.Ranks, r.SlotsPerRank, r.Policy, rate(r.DealRate), rate(r.RemoteRate), rate(r.ItemRate),
			r.Eff, r.EffMakespan, r.CoordUtil, r.LockUtil, r.Eff*float64(r.Slots()))
	}
	return events
}

// saturation returns, for the scan results of one distribution and
// policy in slot order, the largest slot count still at >= 0.9 of ideal
// and the first below it (0 when none).
func saturation(rs []Result) (last, first int) {
	for _, r := range rs {
		if r.Eff >= 0.9 && first == 0 {
			last = r.Slots()
		} else if first == 0 {
			first = r.Slots()
		}
	}
	return last, first
}

// printScan prints the scan and its saturation points.
func printScan(w io.Writer, res []Result) int64 {
	var events int64
	groups := map[string][]Result{}
	var keys []string
	for _, r := range res {
		events += r.Events
		k := r.Dist.Name + "\x00" + r.Policy.Name
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	fmt.Fprintln(w, "\n### Scan: min(slots, 256) ranks, slots spread evenly; throughput ÷ ideal (root coordinator busy)")
	fmt.Fprintln(w)
	var hdr strings.Builder
	hdr.WriteString("| items | policy |")
	sep := "|---|---|"
	for _, r := range groups[keys[0]] {
		fmt.Fprintf(&hdr, " %d |", r.Slots())
		sep += "---|"
	}
	fmt.Fprintln(w, hdr.String())
	fmt.Fprintln(w, sep)
	for _, k := range keys {
		rs := groups[k]
		fmt.Fprintf(w, "| %s | %s |", rs[0].Dist, rs[0].Policy)
		for _, r := range rs {
			fmt.Fprintf(w, " %.2f (%.2f) |", r.Eff, r.CoordUtil)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\n### Saturation: the slot count where throughput falls below 0.9 of ideal")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| items | policy | ≥ 0.9 up to | < 0.9 from | dealing rate there (batches/s) | mean batch |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, k := range keys {
		rs := groups[k]
		last, first := saturation(rs)
		from, dealt, mean := "–", "–", "–"
		if first > 0 {
			from = fmt.Sprint(first)
			for _, r := range rs {
				if r.Slots() == first {
					dealt = rate(r.DealRate)
					mean = fmt.Sprintf("%.1f", r.MeanBatch)
				}
			}
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s |\n", rs[0].Dist, rs[0].Policy, last, from, dealt, mean)
	}
	return events
}
