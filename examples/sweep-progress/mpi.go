//go:build mpirt || mpicgo

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/schollz/progressbar/v3"
)

func run(n, scale int, showBar bool) (err error) {
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		return err
	}
	defer func() {
		if ferr := hataori.Finalize(); err == nil {
			err = ferr
		}
	}()
	world, err := hataori.World()
	if err != nil {
		return err
	}
	rank, err := world.Rank()
	if err != nil {
		return err
	}
	size, err := world.Size()
	if err != nil {
		return err
	}
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()

	// Ctrl-C reaches every rank through the launcher (Open MPI's mpirun
	// passes it on as SIGTERM, MPICH's mpiexec as SIGINT: NotifyContext
	// takes both); the call stops on all of them, and the points that
	// finished are kept.
	ctx, stop := hataori.NotifyContext(context.Background())
	defer stop()

	items := hataori.None[[]point]()
	var bar *progressbar.ProgressBar
	var stats hataori.CallStats
	opts := hataori.Options{Mode: hataori.Outer, OnError: hataori.CollectAll, Stats: &stats}
	if rank == 0 {
		items = hataori.Some(grid(n))
		if showBar {
			bar = progressbar.NewOptions(n, progressbar.OptionSetWriter(os.Stderr), progressbar.OptionSetDescription("sweep"),
				progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetWidth(30))
			// Called on rank 0's coordinator, never on a worker: the bar
			// needs no lock.
			opts.OnProgress = func(p hataori.Progress) {
				_ = bar.Set(p.Done)
				bar.Describe(fmt.Sprintf("sweep (%d failed)", p.Failed))
			}
			opts.ProgressEvery = 50 * time.Millisecond
		}
	}
	out, err := hataori.PmapContext(ctx, world, d, opts, items, func(ctx context.Context, p point) (result, error) {
		return simulate(ctx, p, scale)
	})
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(os.Stderr)
	}
	var pe *hataori.PmapError
	if err != nil && !errors.As(err, &pe) {
		return err
	}
	// Failed points are part of a sweep; a stopped sweep is not complete:
	// every rank (they all have the same error) then exits with status 1,
	// after the root printed the points it kept.
	var stopped error
	if errors.Is(err, hataori.KindCanceled) {
		stopped = err
	}
	if rank != 0 {
		return stopped
	}
	ok := 0
	for i := range out {
		if pe == nil || !pe.Failed(i) {
			ok++
		}
	}
	fmt.Printf("\nsweep of %d points on %d ranks: %d results", n, size, ok)
	if pe != nil {
		// The same list on every rank, in index order.
		fmt.Printf(", %d without a result (%v)\n", len(pe.Failures), pe.Kind)
		for i, f := range pe.Failures {
			if i == 5 {
				fmt.Printf("  … and %d more\n", len(pe.Failures)-i)
				break
			}
			fmt.Printf("  %v\n", f)
		}
	} else {
		fmt.Println()
	}
	fmt.Printf("wall %v; per rank: items, busy share of its slots\n", stats.Wall.Round(time.Millisecond))
	for r := range stats.Items {
		var items int64
		var busy, total time.Duration
		for s := range stats.Items[r] {
			items += stats.Items[r][s]
			busy += stats.Busy[r][s]
			total += stats.Busy[r][s] + stats.Idle[r][s]
		}
		fmt.Printf("  rank %d: %3d items, %3.0f%% busy, %d B sent to it, %d B back\n", r, items, 100*float64(busy)/float64(max(total, 1)), stats.SentBytes[r], stats.RecvBytes[r])
	}
	return stopped
}
