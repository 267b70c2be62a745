// Command quickstart squares 1..1000 with hataori.Pmap across MPI ranks
// (each item takes a millisecond) and prints the sum on the root. Built
// without an MPI backend it does the same work locally with hataori.MapIn.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// Keep main's goroutine on the process's main thread, where MPI starts.
func init() { runtime.LockOSThread() }

func main() {
	_, err := hataori.InitThread(hataori.ThreadFunneled)
	mpi := err == nil
	if mpi || errors.Is(err, hataori.ErrNoMPI) { // ErrNoMPI: built without -tags mpirt or mpicgo
		err = run(mpi)
	}
	if err != nil { // report before Finalize: after a Ctrl-C mpirun may end the job in it
		fmt.Fprintln(os.Stderr, "quickstart:", err)
	}
	if mpi {
		if ferr := hataori.Finalize(); ferr != nil && err == nil {
			fmt.Fprintln(os.Stderr, "quickstart:", ferr)
			err = ferr
		}
	}
	if err != nil {
		os.Exit(1)
	}
}

func square(x int) (int, error) {
	time.Sleep(time.Millisecond) // stands for real work
	return x * x, nil
}

func run(mpi bool) error {
	ctx, stop := hataori.NotifyContext(context.Background()) // Ctrl-C stops every rank
	defer stop()
	d, err := hataori.NewLocalDomain() // one worker per CPU this process may use
	if err != nil {
		return err
	}
	defer d.Close()
	items := make([]int, 1000)
	for i := range items {
		items[i] = i + 1
	}
	if !mpi {
		out, err := hataori.MapIn(ctx, d, hataori.Auto, items, square) // Auto: every worker of d
		if err == nil {
			fmt.Printf("sum of squares of 1..%d: %d (no MPI: %d workers)\n", len(items), sum(out), d.Workers())
		}
		return err
	}
	world, err := hataori.World()
	if err != nil {
		return err
	}
	rank, err := world.Rank()
	if err != nil {
		return err
	}
	rootItems := hataori.None[[]int]() // only the root supplies the items
	if rank == 0 {
		rootItems = hataori.Some(items)
	}
	var stats hataori.CallStats // filled on the root only
	// Root 0, every worker of d, automatic batch sizes:
	opts := hataori.Options{Stats: &stats}
	out, err := hataori.Pmap(ctx, world, d, opts, rootItems, square)
	if err != nil {
		return err // the same *hataori.PmapError on every rank
	}
	if rank == 0 { // out: every result in input order (nil on other ranks)
		fmt.Printf("sum of squares of 1..%d: %d (items per rank and slot %v)\n", len(items), sum(out), stats.Items)
	}
	return nil
}

func sum(xs []int) (s int) {
	for _, x := range xs {
		s += x
	}
	return s
}
