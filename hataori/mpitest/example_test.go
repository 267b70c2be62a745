package mpitest_test

import (
	"testing"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestRing is a multi-rank test: the parent process starts real MPI jobs of
// 1, 2 and 4 ranks, and each rank runs the code after Init.
func TestRing(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Test: "TestRing"})
		}
		return
	}
	rank, size := mpitest.Init(t) // every MPI call stays on this goroutine
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	if size == 1 {
		return
	}
	msg := []byte{byte(rank)}
	next, prev := (rank+1)%size, (rank+size-1)%size
	if rank%2 == 0 {
		err = world.Send(msg, next, 7)
		if err == nil {
			_, err = world.Recv(msg, prev, 7)
		}
	} else {
		in := make([]byte, 1)
		if _, err = world.Recv(in, prev, 7); err == nil {
			err = world.Send(msg, next, 7)
		}
		msg = in
	}
	if err != nil {
		t.Fatal(err)
	}
	if rank%2 == 1 && int(msg[0]) != prev {
		t.Fatalf("rank %d got %d from its predecessor, want %d", rank, msg[0], prev)
	}
}

// This example shows the shape of a multi-rank test (see TestRing in this
// file): the same test function is the parent, which launches the job, and
// every rank of it.
func Example() {}
