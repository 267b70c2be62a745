//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// start measures how soon a call's first item runs, against one raw
// MPI_Barrier in the same rounds (the least any collective costs there):
// each round a barrier, a timed barrier, another barrier, then a Pmap of
// 16 items sleeping 2 ms, zero Options, MPI-only and hybrid (the
// NewLocalDomain configuration) alternately. An item returns the wall
// clock at its start (every rank runs on this machine); the ranks' entry
// times are gathered after the call. Printed on the root, medians over
// rounds (the first call of each configuration, which makes the private
// duplicate, is left out): the first item's start after the root's entry
// into Pmap and after the last rank's entry, with the items per rank.
func start(e *env) error {
	d, err := e.openDomain(fmt.Sprintf("start (%d ranks, %d rounds after one warm-up): 16 items of 2 ms, zero Options", e.size, rounds))
	if err != nil {
		return err
	}
	defer d.Close()
	type series struct {
		name            string
		dom             *hataori.Domain
		bar, root, last []float64
		items           []int64
	}
	configs := []*series{{name: "mpi-only"}, {name: "hybrid", dom: d}}
	for round := 0; round <= rounds; round++ {
		for _, c := range configs {
			if err := e.world.Barrier(); err != nil {
				return err
			}
			t0 := time.Now()
			if err := e.world.Barrier(); err != nil {
				return err
			}
			bar := time.Since(t0)
			if err := e.world.Barrier(); err != nil {
				return err
			}
			enter := time.Now().UnixNano()
			var st hataori.CallStats
			starts, err := hataori.Pmap(ctx, e.world, c.dom, hataori.Options{Stats: &st}, e.items(16), func(int) (int64, error) {
				t := time.Now().UnixNano()
				time.Sleep(2 * time.Millisecond)
				return t, nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			enters, err := hataori.Gather(ctx, e.world, 0, enter)
			if err != nil {
				return err
			}
			if e.rank != 0 || round == 0 {
				continue
			}
			first := slices.Min(starts)
			c.bar = append(c.bar, float64(bar.Microseconds()))
			c.root = append(c.root, float64(first-enter)/1e3)
			c.last = append(c.last, float64(first-slices.Max(enters))/1e3)
			c.items = addPerRank(c.items, st.Items)
		}
	}
	if e.rank != 0 {
		return nil
	}
	for _, c := range configs {
		e.printf("  start %-8s first item after the root's entry: median %.0f µs (%.0f–%.0f); after the last rank's entry: median %.0f µs (%.0f–%.0f); raw MPI_Barrier in the same rounds: median %.0f µs (%.0f–%.0f); items per rank %v\n",
			c.name, median(c.root), slices.Min(c.root), slices.Max(c.root), median(c.last), slices.Min(c.last), slices.Max(c.last),
			median(c.bar), slices.Min(c.bar), slices.Max(c.bar), c.items)
	}
	return nil
}

// addPerRank adds the items each rank ran (the sums over its slots) to acc.
func addPerRank(acc []int64, items [][]int64) []int64 {
	if acc == nil {
		acc = make([]int64, len(items))
	}
	for r, row := range items {
		for _, n := range row {
			acc[r] += n
		}
	}
	return acc
}
