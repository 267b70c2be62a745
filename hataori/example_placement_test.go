package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/hataori/hataori-go/hataori"
)

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
		log.Fatal(err) // the same *PlacementError on every rank
	}
	fmt.Println(rank, got)
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
		fmt.Println(results) // one length per rank, in rank order
	}
}

// A failure converges: every rank returns an equal *PlacementError, which
// names the lowest rank that reported it, and the communicator stays usable.
func ExampleGather_error() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	// Root 99 is out of range on every rank: a preflight failure, before any
	// data moves.
	_, err = hataori.Gather(context.Background(), world, 99, "x")
	var pe *hataori.PlacementError
	if errors.As(err, &pe) && errors.Is(err, hataori.ErrPlacementPreflight) {
		fmt.Println(pe.Kind, pe.Rank, pe.Message)
	}
}
