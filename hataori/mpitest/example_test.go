package mpitest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// testSquares is a complete multi-rank test. In a package of your own it
// is a top-level test function, func TestSquares(t *testing.T), with this
// body; here TestSquares (example_funcs_test.go) calls it, so that this
// file stays one whole example. Build the test binary with an MPI backend:
//
//	eval "$(scripts/build-wrappers.sh)"   # HATAORI_WRAPPER_OPENMPI, HATAORI_WRAPPER_MPICH
//	go test -tags mpirt -run TestSquares ./yourpkg
func testSquares(t *testing.T) {
	if !mpitest.Child() {
		// The parent (plain go test): one real job per rank count and MPI,
		// each killed with its ranks after Timeout. A job passes when every
		// rank passes and the output holds every Want line.
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{
				Ranks:   n,
				Timeout: time.Minute,
				Test:    "TestSquares", // the name of this test function
				Want:    []string{fmt.Sprintf("sum of squares 285 on %d ranks", n)},
			})
		}
		return
	}

	// A rank: Init initialises MPI on this goroutine, which must make every
	// MPI call (no subtests or other goroutines calling MPI).
	rank, size := mpitest.Init(t)
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err) // a failing rank aborts the job: no rank waits
	}
	items := hataori.None[[]int]()
	if rank == 0 {
		items = hataori.Some([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	}
	squares, err := hataori.Pmap(context.Background(), world, nil, hataori.Options{}, items,
		func(x int) (int, error) { return x * x, nil })
	if err != nil {
		t.Fatal(err)
	}
	if rank != 0 {
		return
	}
	sum := 0
	for _, s := range squares {
		sum += s
	}
	if sum != 285 {
		t.Errorf("sum of squares %d, want 285", sum)
	}
	fmt.Printf("sum of squares %d on %d ranks\n", sum, size)
}

// The same test binary is the parent (go test, where Child is false) and
// every rank of the jobs that Run starts (Child true). testSquares above is
// a complete multi-rank test.
func Example() {
	fmt.Println("parent:", !mpitest.Child())
	// Output: parent: true
}
