//go:build mpirt || mpicgo

package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// durations returns n heavy-tailed (Pareto, alpha 1.2) durations in a
// fixed pseudo-random order, scaled to sum to total.
func durations(n int, total time.Duration) []time.Duration {
	rng := rand.New(rand.NewPCG(7, 11))
	raw := make([]float64, n)
	sum := 0.0
	for i := range raw {
		raw[i] = math.Min(math.Pow(1-rng.Float64(), -1/1.2), 60)
		sum += raw[i]
	}
	out := make([]time.Duration, n)
	for i, r := range raw {
		out[i] = time.Duration(float64(total) * r / sum)
	}
	return out
}

// run runs the sweep on every rank and returns, on rank 0, its record
// (nil elsewhere).
func run(sw sweep) (*record, error) {
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		return nil, err
	}
	defer hataori.Finalize()
	world, err := hataori.World()
	if err != nil {
		return nil, err
	}
	rank, err := world.Rank()
	if err != nil {
		return nil, err
	}
	size, err := world.Size()
	if err != nil {
		return nil, err
	}
	var d *hataori.Domain
	opts := hataori.Options{BatchSize: sw.batch}
	switch sw.mode {
	case "hybrid":
		if d, err = hataori.NewLocalDomain(); err != nil {
			return nil, err
		}
		defer d.Close()
		opts.Mode = hataori.Outer
	case "mpi-only":
	default:
		return nil, fmt.Errorf("unknown mode %q", sw.mode)
	}
	ds := durations(sw.items, sw.total)
	items := hataori.None[[]int]()
	if rank == 0 {
		xs := make([]int, len(ds))
		for i := range xs {
			xs[i] = i
		}
		items = hataori.Some(xs)
	}
	st := hataori.CallStats{RecordSpans: true}
	opts.Stats = &st
	if _, err := hataori.Pmap(context.Background(), world, d, opts, items, func(i int) (int, error) {
		time.Sleep(ds[i])
		return i, nil
	}); err != nil {
		return nil, err
	}
	if rank != 0 {
		return nil, nil
	}
	rec := &record{Wall: st.Wall, Busy: st.Busy, Spans: st.Spans, Sizes: st.Sizes}
	slots := 0
	for _, row := range st.Items {
		rec.Slots = append(rec.Slots, len(row))
		slots += len(row)
	}
	batch := "automatic batches"
	if sw.batch > 0 {
		batch = fmt.Sprintf("batch %d", sw.batch)
	}
	rec.Title = fmt.Sprintf("Pmap (%s, %s): %d heavy-tailed items (%v in all) on %d ranks, %d slots",
		sw.mode, batch, len(ds), sw.total, size, slots)
	return rec, nil
}
