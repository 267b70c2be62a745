// Command scatter-gather shards data from the root, computes on every rank
// and gathers the results back: the Scatter → compute → Gather pattern.
//
// The root holds the numbers 1..n. hataori.Scatter hands one contiguous
// shard to every rank (shard i to rank i; a []uint64 travels as raw
// bytes), every rank computes the Collatz stopping time of each of its
// numbers with hataori.MapIn on its local domain, and hataori.Gather
// brings every rank's []uint32 back to the root in rank order. The root
// reassembles them and prints a checksum that does not depend on the
// number of ranks:
//
//	collatz 1..100000: 10753840 steps, longest 350 (from 77031), fnv-1a 0x28955459eb5bf4dd
//
// Without MPI (no mpirt or mpicgo build tag) the program computes the same
// numbers locally and prints the same checksum:
//
//	go run ./examples/scatter-gather
//	go build -tags mpirt -o scatter-gather ./examples/scatter-gather
//	MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI mpirun -n 4 ./scatter-gather
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"os"
	"runtime"

	"github.com/hataori/hataori-go/hataori"
)

// MPI is called from the thread that initialised it: keep the main
// goroutine on the main thread.
func init() { runtime.LockOSThread() }

func main() {
	n := flag.Int("n", 100000, "compute the numbers 1..n")
	flag.Parse()
	if *n < 1 {
		fail(errors.New("need -n ≥ 1"))
	}
	ctx := context.Background()
	_, err := hataori.InitThread(hataori.ThreadFunneled)
	if errors.Is(err, hataori.ErrNoMPI) {
		steps, err := computeLocal(ctx, numbers(*n))
		if err != nil {
			fail(err)
		}
		fmt.Println("scatter-gather: no MPI in this build, computed locally")
		fmt.Println(checksum(steps))
		return
	}
	if err != nil {
		fail(err)
	}
	err = runMPI(ctx, *n)
	if ferr := hataori.Finalize(); err == nil {
		err = ferr
	}
	if err != nil {
		fail(err)
	}
}

// runMPI scatters 1..n from the root, computes every shard where it lands
// and gathers the results on the root.
func runMPI(ctx context.Context, n int) error {
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
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()

	// The root cuts its data into exactly one shard per rank.
	shards := hataori.None[[][]uint64]()
	if rank == 0 {
		all := numbers(n)
		cut := make([][]uint64, size)
		for r := range cut {
			cut[r] = all[r*n/size : (r+1)*n/size]
		}
		shards = hataori.Some(cut)
	}
	mine, err := hataori.Scatter(ctx, world, 0, shards)
	if err != nil {
		return err // the same *hataori.CollectiveError on every rank
	}

	// Local work, on this rank's domain. (Should it fail, this rank exits
	// with an error and the launcher ends the job, so that no rank waits
	// in Gather.)
	steps, err := hataori.MapIn(ctx, d, hataori.Outer, mine, stoppingTime)
	if err != nil {
		return err
	}

	parts, err := hataori.Gather(ctx, world, 0, steps)
	if err != nil {
		return err
	}
	if rank != 0 {
		return nil // only the root receives the parts
	}
	var all []uint32
	lens := make([]int, len(parts))
	for r, p := range parts { // rank order, which is input order
		all = append(all, p...)
		lens[r] = len(p)
	}
	fmt.Printf("scatter-gather: %d ranks, shards of %v numbers\n", size, lens)
	fmt.Println(checksum(all))
	return nil
}

// computeLocal returns the stopping time of every number, on the local
// domain (the run without MPI).
func computeLocal(ctx context.Context, xs []uint64) ([]uint32, error) {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return hataori.MapIn(ctx, d, hataori.Outer, xs, stoppingTime)
}

// stoppingTime counts the Collatz steps (x → x/2 or 3x+1) from x to 1.
func stoppingTime(x uint64) (uint32, error) {
	if x == 0 {
		return 0, errors.New("collatz: 0 never reaches 1")
	}
	var steps uint32
	for ; x != 1; steps++ {
		if x%2 == 0 {
			x /= 2
		} else {
			x = 3*x + 1
		}
	}
	return steps, nil
}

// numbers returns 1..n.
func numbers(n int) []uint64 {
	xs := make([]uint64, n)
	for i := range xs {
		xs[i] = uint64(i + 1)
	}
	return xs
}

// checksum summarises the stopping times of 1..len(steps): their total, the
// longest and where it starts, and an FNV-1a hash of all of them in order.
func checksum(steps []uint32) string {
	h := fnv.New64a()
	var total uint64
	var longest uint32
	from := 0
	for i, s := range steps {
		total += uint64(s)
		if s > longest {
			longest, from = s, i+1
		}
		h.Write(binary.LittleEndian.AppendUint32(nil, s))
	}
	return fmt.Sprintf("collatz 1..%d: %d steps, longest %d (from %d), fnv-1a %#016x",
		len(steps), total, longest, from, h.Sum64())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scatter-gather:", err)
	os.Exit(1)
}
