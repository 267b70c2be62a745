package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
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
	// The zero Options: root 0, FailFast, and Mode Auto, which on a rank
	// with a domain means Outer (every worker of d runs batches) and on an
	// MPI-only rank (d nil) Sequential.
	upper, err := hataori.Pmap(context.Background(), world, d,
		hataori.Options{}, words,
		func(w string) (string, error) { return strings.ToUpper(w), nil })
	if err != nil {
		// The same *PmapError on every rank.
		log.Fatal(err)
	}
	if rank == 0 {
		fmt.Println(upper) // [ALPHA BETA GAMMA DELTA]
	}
}

// PmapStream reads the root's items lazily and hands each result to the
// root's sink as it becomes due, in input order: here the squares of an
// unbounded sequence, until the sink has the first ten (the sequence's
// yield then returns false). The root never holds more than Options.Window
// items and results.
func ExamplePmapStream() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	naturals := hataori.None[iter.Seq[int]]() // only the root supplies items
	var sink func(i, sq int) error            // and receives the results
	var firstTen []int
	if rank == 0 {
		naturals = hataori.Some(iter.Seq[int](func(yield func(int) bool) {
			for n := 1; yield(n); n++ {
			}
		}))
		sink = func(i, sq int) error {
			if firstTen = append(firstTen, sq); len(firstTen) == 10 {
				return errEnough // stops the call like a failing item, on every rank
			}
			return nil
		}
	}
	err = hataori.PmapStream(context.Background(), world, nil, hataori.Options{Window: 64}, naturals,
		func(_ context.Context, n int) (int, error) { return n * n, nil }, sink)
	if !errors.Is(err, hataori.KindUser) {
		log.Fatal(err)
	}
	if rank == 0 {
		fmt.Println(firstTen, errors.Is(err, errEnough))
	}
}

var errEnough = errors.New("enough")

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
	if errors.As(err, &pe) && errors.Is(err, hataori.KindUser) {
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
// the failing input index, the winning error key, the rank that reported
// it and its message. The reporting rank also keeps the callback's own
// error for errors.Is/As.
func ExamplePmapError() {
	var err error = &hataori.PmapError{Kind: hataori.KindUser, Index: 5, Key: 65, Rank: 1, Message: "row 5: no convergence"}
	err = fmt.Errorf("render: %w", err)

	var pe *hataori.PmapError
	if errors.As(err, &pe) {
		fmt.Println(pe.Kind, pe.Index, pe.Rank, pe.Message)
	}
	fmt.Println(errors.Is(err, hataori.KindUser), errors.Is(err, hataori.KindWire))
	fmt.Println(err)
	// Output:
	// user 5 1 row 5: no convergence
	// true false
	// render: hataori: pmap user error (item 5, rank 1, key 65): row 5: no convergence
}

// Under CollectAll every item runs: the root gets every successful result,
// and every rank the same list of failed items, in index order. (The error
// here is built by hand; Pmap returns one like it.)
func ExamplePmapError_collectAll() {
	out := []float64{0.5, 0, 0.7, 0} // the root's results: zero where an item failed
	var err error = &hataori.PmapError{Kind: hataori.KindUser, Index: 1, Key: 13, Rank: 1, Message: "diverged",
		Failures: []hataori.ItemFailure{
			{Index: 1, Kind: hataori.KindUser, Rank: 1, Message: "diverged"},
			{Index: 3, Kind: hataori.KindUser, Rank: 0, Message: "diverged"},
		}}
	var pe *hataori.PmapError
	if errors.As(err, &pe) {
		for i, v := range out {
			if !pe.Failed(i) {
				fmt.Println("item", i, "=", v)
			}
		}
		for _, f := range pe.Failures {
			fmt.Println(f)
		}
	}
	// Output:
	// item 0 = 0.5
	// item 2 = 0.7
	// item 1 (rank 1): diverged
	// item 3 (rank 0): diverged
}

// A sweep that keeps going past failures, shows progress on the root and
// stops its long callbacks as soon as the call stops on any rank (an item
// failing under FailFast, a rank's context ending: Ctrl-C on the
// launcher). See examples/sweep-progress for the whole program.
func ExamplePmapContext() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	params := hataori.None[[]float64]()
	if rank == 0 {
		params = hataori.Some([]float64{0.1, 0.2, 0.3})
	}
	var stats hataori.CallStats
	opts := hataori.Options{
		OnError:    hataori.CollectAll,
		OnProgress: func(p hataori.Progress) { log.Printf("%d/%d done, %d failed", p.Done, p.Total, p.Failed) },
		Stats:      &stats,
	}
	out, err := hataori.PmapContext(context.Background(), world, nil, opts, params, func(ctx context.Context, x float64) (float64, error) {
		for i := 0; i < 1000; i++ {
			if err := ctx.Err(); err != nil {
				return 0, err // the call is stopping: return early
			}
			x = x * x // … a long computation
		}
		return x, nil
	})
	var pe *hataori.PmapError
	if errors.As(err, &pe) {
		for _, f := range pe.Failures { // the same list on every rank
			log.Println(f)
		}
	}
	if rank == 0 {
		fmt.Println(len(out), "results;", stats.Items) // items per rank and slot
	}
}
