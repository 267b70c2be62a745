package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/hataori/hataori-go/hataori"
)

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
