package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/hataori/hataori-go/hataori"
)

// The MPI examples here have no Output comment: TestExamplesMPI
// (example_mpi_test.go) runs them on 2 ranks and checks what they print.

// An SPMD program: every rank runs the same code and calls Pmap at the same
// point; rank 0 supplies the items and gets the results in input order,
// while every rank (rank 0 included) computes batches on its local domain.
// Build it with -tags mpirt (or mpicgo), lock the main goroutine to the main
// thread in an init function of package main, and start it with mpirun:
//
//	func init() { runtime.LockOSThread() }
//
//	mpirun -n 4 env MPI_RT_LIB=/path/to/libmpiabi.so ./prog
func ExamplePmap() {
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		log.Fatal(err)
	}
	defer hataori.Finalize()
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, err := world.Rank()
	if err != nil {
		log.Fatal(err)
	}
	d, err := hataori.NewLocalDomain()
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()

	words := hataori.None[[]string]() // only the root supplies items
	if rank == 0 {
		words = hataori.Some([]string{"alpha", "beta", "gamma", "delta"})
	}
	upper, err := hataori.Pmap(context.Background(), world, d,
		hataori.Options{Root: 0, BatchSize: 2, Mode: hataori.Outer}, words,
		func(w string) (string, error) { return strings.ToUpper(w), nil })
	if err != nil {
		// The same *PmapError on every rank.
		log.Fatal(err)
	}
	if rank == 0 {
		fmt.Println(upper) // [ALPHA BETA GAMMA DELTA]
	}
}

// A failing callback fails the whole call: the root stops handing out
// work, running batches finish, and every rank returns the same
// *PmapError, naming the lowest failing item whichever rank met it.
func ExamplePmap_error() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	items := hataori.None[[]int]()
	if rank == 0 {
		items = hataori.Some([]int{1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	_, err = hataori.Pmap(context.Background(), world, nil, hataori.Options{}, items, func(x int) (int, error) {
		if x%3 == 0 {
			return 0, fmt.Errorf("%d is a multiple of 3", x)
		}
		return x, nil
	})
	var pe *hataori.PmapError
	if errors.As(err, &pe) && errors.Is(err, hataori.ErrUser) {
		fmt.Printf("rank %d: %s error: %s\n", rank, pe.Kind, pe.Message)
	}
}

// Options.Stats, on the root, receives where the work went: the items and
// batches each slot of each rank ran.
func ExampleCallStats() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	items := hataori.None[[]int]()
	if rank == 0 {
		items = hataori.Some(make([]int, 100))
	}
	var stats hataori.CallStats
	opts := hataori.Options{Root: 0, BatchSize: 10, Stats: &stats}
	if _, err := hataori.Pmap(context.Background(), world, nil, opts, items,
		func(x int) (int, error) { return x + 1, nil }); err != nil {
		log.Fatal(err)
	}
	if rank != 0 {
		return
	}
	var ran, batches int64
	for r := range stats.Items { // rank r …
		for s := range stats.Items[r] { // … slot s
			ran += stats.Items[r][s]
			batches += stats.Batches[r][s]
		}
	}
	fmt.Printf("%d ranks ran %d items in %d batches\n", len(stats.Items), ran, batches)
}

// Every rank of a failed Pmap returns an identical *PmapError: the kind,
// the winning error key, the rank that reported it and its message. The
// reporting rank also keeps the callback's own error for errors.Is/As.
func ExamplePmapError() {
	var err error = &hataori.PmapError{Kind: hataori.KindUser, Key: 65, Rank: 1, Message: "row 5: no convergence"}
	err = fmt.Errorf("render: %w", err)

	var pe *hataori.PmapError
	if errors.As(err, &pe) {
		fmt.Println(pe.Kind, pe.Rank, pe.Message)
	}
	fmt.Println(errors.Is(err, hataori.ErrUser), errors.Is(err, hataori.ErrWire))
	// Output:
	// user 1 row 5: no convergence
	// true false
}
