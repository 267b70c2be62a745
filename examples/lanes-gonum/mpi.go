//go:build mpirt || mpicgo

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/internal/workspace"
	"github.com/hataori/hataori-go/lanes"
)

func init() { mpiMain = runMPI }

// runMPI distributes the seeds over every rank's lanes with PmapLanes: rank
// 0 supplies the seeds and receives the results, and on every rank the
// main goroutine (locked to the MPI main thread in init) coordinates while
// the lanes compute.
func runMPI(ctx context.Context, cfg config, l *lanes.Lanes[*workspace.Workspace], seeds []uint64) (err error) {
	level, err := hataori.InitThread(hataori.ThreadFunneled)
	if err != nil {
		return err
	}
	defer func() {
		if ferr := hataori.Finalize(); err == nil {
			err = ferr
		}
	}()
	if level < hataori.ThreadFunneled {
		return fmt.Errorf("MPI provides thread level %v; lanes need %v", level, hataori.ThreadFunneled)
	}
	comm, err := hataori.World()
	if err != nil {
		return err
	}
	rank, err := comm.Rank()
	if err != nil {
		return err
	}
	size, err := comm.Size()
	if err != nil {
		return err
	}
	opts := hataori.Options{Root: 0, BatchSize: 2}
	for r := range cfg.runs {
		items := hataori.None[[]uint64]()
		if rank == opts.Root {
			items = hataori.Some(seeds)
		}
		start := time.Now()
		tops, err := lanes.PmapLanes(ctx, comm, l, opts, items, topEigen)
		if err != nil {
			return err
		}
		if rank == opts.Root {
			fmt.Printf("run %d: %d items, %d ranks × %d lanes, n=%d: checksum %.10e in %v\n",
				r, len(tops), size, l.Count(), cfg.n, checksum(tops), time.Since(start).Round(time.Microsecond))
		}
	}
	// Every rank's workspaces stayed warm over the runs; show who computed what.
	counts := make([]int, l.Count())
	for i, ws := range l.Engines() {
		counts[i] = ws.Items()
	}
	all, err := hataori.Gather(ctx, comm, opts.Root, counts)
	if err != nil {
		return err
	}
	for r, c := range all {
		fmt.Printf("rank %d: items per lane over all runs %v\n", r, c)
	}
	return nil
}
