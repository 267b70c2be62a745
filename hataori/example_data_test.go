package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/hataori/hataori-go/hataori"
)

// The MPI examples here have no Output comment: TestExamplesMPI
// (example_mpi_test.go) runs them on 2 ranks and checks what they print.

// Every rank calls Broadcast; only the root (rank 0) supplies the value.
// A []float64 travels as bytes, straight from the root's slice into the
// other ranks' new slices.
func ExampleBroadcast() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	params := hataori.None[[]float64]()
	if rank == 0 {
		params = hataori.Some([]float64{0.5, 1.5, 2.5})
	}
	got, err := hataori.Broadcast(context.Background(), world, 0, params)
	if err != nil {
		log.Fatal(err) // the same *CollectiveError on every rank
	}
	fmt.Println("rank", rank, "has", got)
}

// The root hands one shard to every rank (shard i to rank i) and later
// gathers one result per rank, in rank order.
func ExampleScatter() {
	ctx := context.Background()
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	size, _ := world.Size()
	shards := hataori.None[[]string]()
	if rank == 0 {
		work := make([]string, size)
		for i := range work {
			work[i] = fmt.Sprintf("part %d", i)
		}
		shards = hataori.Some(work)
	}
	mine, err := hataori.Scatter(ctx, world, 0, shards)
	if err != nil {
		log.Fatal(err)
	}
	results, err := hataori.Gather(ctx, world, 0, len(mine))
	if err != nil {
		log.Fatal(err)
	}
	if rank == 0 {
		fmt.Println("lengths", results) // one length per rank, in rank order
	}
}

// Every rank passes a value; the root gets them all in rank order, every
// other rank nil.
func ExampleGather() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	all, err := hataori.Gather(context.Background(), world, 0, fmt.Sprintf("r%d", rank))
	if err != nil {
		log.Fatal(err)
	}
	if all != nil {
		fmt.Println("gathered", all)
	}
}

// A failure converges: every rank returns an equal *CollectiveError, which
// names the lowest rank that reported it, and the communicator stays usable.
func ExampleGather_error() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	// Root 99 is out of range on every rank: a preflight failure, before any
	// data moves.
	_, err = hataori.Gather(context.Background(), world, 99, "x")
	var pe *hataori.CollectiveError
	if errors.As(err, &pe) && errors.Is(err, hataori.KindPreflight) {
		fmt.Println(pe.Op, pe.Kind, pe.Rank, pe.Message)
	}
}

// A mistake on the root alone, here one shard too few, fails Scatter on
// every rank with the same error, before any data moves: no rank waits.
func ExampleCollectiveError() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	size, _ := world.Size()
	shards := hataori.None[[]int]()
	if rank == 0 {
		shards = hataori.Some(make([]int, size-1))
	}
	_, err = hataori.Scatter(context.Background(), world, 0, shards)
	var pe *hataori.CollectiveError
	if errors.As(err, &pe) {
		fmt.Printf("rank %d: %s %s error reported by rank %d\n", rank, pe.Op, pe.Kind, pe.Rank)
	}
}

// sample has a numeric slice nested in a struct: declared as Bulk, it
// travels as one block of bytes instead of element by element.
type sample struct {
	Name   string
	Values hataori.Bulk[float64]
}

func ExampleBulk() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	v := hataori.None[sample]()
	if rank == 0 {
		v = hataori.Some(sample{Name: "temperatures", Values: []float64{21.5, 22, 19.75}})
	}
	got, err := hataori.Broadcast(context.Background(), world, 0, v)
	if err != nil {
		log.Fatal(err)
	}
	values := []float64(got.Values) // Bulk converts to and from []E
	fmt.Println("rank", rank, got.Name, values)
}
