//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// hooksItems is the hooks case's input length: long enough (tens of
// milliseconds per call) that the calls' fixed costs and the noise of a
// shared machine do not hide a 2 % difference.
var hooksItems = 100000

// hooks measures what the progress hook and the statistics cost:
// hooksItems trivial items, batch 1, MPI-only and hybrid, each call made twice per
// round, once plain and once with Options.OnProgress (a hook that stores
// the count, at the default interval) and Options.Stats (without spans),
// the order of the two alternating from round to round; the median of the
// rounds' per-item times of each, and their ratio (aim <= 1.02). With
// trivial items the root's own slot takes nearly every item (it never
// waits for a round trip), so a third configuration, "remote", slows the
// root's callback down (100 µs per item) to make the other ranks run most
// of the hooksItems/50 items, through READY/TASK/RESULT, where Stats adds
// two clock readings per batch.
func hooks(e *env) error {
	if e.size < 2 {
		return fmt.Errorf("needs at least 2 ranks")
	}
	n := hooksItems
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()
	e.printf("hooks (%d trivial items, batch 1, %d ranks, %d rounds; remote: %d items, the root's callback slowed): OnProgress + Stats against neither\n", n, e.size, rounds, n/50)
	type variant struct {
		name        string
		dom         *hataori.Domain
		n           int
		rootDelay   time.Duration // the root's callback sleeps this long
		plain, with []float64     // µs/item per round
		ratios      []float64     // per round: with / plain
		rootShare   []float64     // per round: the share of the items the root ran (from Stats)
	}
	variants := []*variant{{name: "mpi-only", n: n}, {name: "hybrid", dom: d, n: n},
		{name: "remote", n: n / 50, rootDelay: 100 * time.Microsecond}}
	var seen atomic.Int64
	var share float64
	run := func(v *variant, on bool) (float64, error) {
		opts := hataori.Options{BatchSize: 1}
		var st hataori.CallStats
		if on {
			opts.Stats = &st
			opts.OnProgress = func(p hataori.Progress) { seen.Store(int64(p.Done)) }
		}
		if err := e.world.Barrier(); err != nil {
			return 0, err
		}
		start := time.Now()
		n := v.n
		out, err := hataori.Pmap(ctx, e.world, v.dom, opts, e.items(n), func(x int) (int, error) {
			if v.rootDelay > 0 && e.rank == 0 {
				time.Sleep(v.rootDelay)
			}
			return x + 1, nil
		})
		el := time.Since(start)
		if err != nil {
			return 0, err
		}
		if e.rank == 0 && (len(out) != n || out[n-1] != n) {
			return 0, fmt.Errorf("wrong results")
		}
		if on && e.rank == 0 {
			if seen.Load() != int64(n) || st.Items == nil {
				return 0, fmt.Errorf("the hook saw %d items, stats %v", seen.Load(), st.Items != nil)
			}
			share = float64(rankTotals(st)[0]) / float64(n)
		}
		return us(el) / float64(n), nil
	}
	for round := 0; round <= rounds; round++ { // round 0 is a warm-up
		for _, v := range variants {
			var plain, with float64
			var err error
			if round%2 == 0 {
				if plain, err = run(v, false); err == nil {
					with, err = run(v, true)
				}
			} else {
				if with, err = run(v, true); err == nil {
					plain, err = run(v, false)
				}
			}
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			if round == 0 || e.rank != 0 {
				continue
			}
			v.plain, v.with = append(v.plain, plain), append(v.with, with)
			v.ratios = append(v.ratios, with/plain)
			v.rootShare = append(v.rootShare, share)
			e.printf("  round %d %-8s plain %.3f µs/item, with hooks %.3f µs/item: %.3f\n", round, v.name, plain, with, with/plain)
		}
	}
	for _, v := range variants {
		e.printf("  hooks %-8s batch 1, %6d items: median %.3f µs/item plain, %.3f with OnProgress+Stats: ratio of medians %.3f, median of round ratios %.3f (aim <= 1.02); the root ran %.0f%% of the items\n",
			v.name, v.n, median(v.plain), median(v.with), median(v.with)/median(v.plain), median(v.ratios), 100*median(v.rootShare))
	}
	return nil
}
