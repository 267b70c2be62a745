//go:build mpirt || mpicgo

package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// MPI mode: rows are dealt out dynamically by hataori.Pmap to every rank,
// rank 0 included, and rank 0 writes the image. By default each rank
// renders its rows on a local domain in Outer mode (hybrid); -mpi-only
// renders them on the calling goroutine.
//
//	go build -tags mpirt ./examples/mandelbrot
//	mpirun -n 2 env MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI ./mandelbrot -mpi
var (
	mpiOnly  = flag.Bool("mpi-only", false, "with -mpi: render on the calling goroutine of each rank (no domain)")
	mpiBatch = flag.Int("batch", 4, "with -mpi: rows per Pmap batch")
)

func init() { mpiMain = runMPI }

// runMPI renders p across the ranks; rank 0 writes the image. It
// initialises and finalises MPI on the main goroutine (locked to the main
// thread in init), which coordinates while a domain's workers render.
func runMPI(p params) (err error) {
	level, err := hataori.InitThread(hataori.ThreadFunneled)
	if err != nil {
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
	var d *hataori.Domain
	mode, how := hataori.Sequential, "MPI-only"
	if !*mpiOnly && level >= hataori.ThreadFunneled {
		if d, err = hataori.NewLocalDomain(); err != nil {
			return err
		}
		defer d.Close()
		mode, how = hataori.Outer, fmt.Sprintf("hybrid, Outer on %d worker(s) per rank", d.Workers())
	}
	rows := hataori.None[[]int]()
	if rank == 0 {
		ys := make([]int, p.Height)
		for y := range ys {
			ys[y] = y
		}
		rows = hataori.Some(ys)
	}
	start := time.Now()
	img, err := hataori.Pmap(context.Background(), world, d, hataori.Options{Root: 0, BatchSize: *mpiBatch, Mode: mode}, rows,
		func(y int) ([]uint8, error) { return renderRow(y, p), nil })
	if err != nil {
		return err
	}
	if rank != 0 {
		return nil
	}
	elapsed := time.Since(start)
	if err := writePNG(p.Out, img, p); err != nil {
		return err
	}
	fmt.Printf("rendered %dx%d (%d iterations) on %d ranks (%s) in %v: %.0f rows/s; wrote %s\n",
		p.Width, p.Height, p.MaxIter, size, how, elapsed.Round(time.Millisecond),
		float64(p.Height)/elapsed.Seconds(), p.Out)
	return nil
}
