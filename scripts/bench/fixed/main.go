//go:build mpirt || mpicgo

// Command fixed measures the fixed cost of a cheap collective call against
// the raw MPI collectives such a call needs, in the same run:
//
//   - raw: MPI_Comm_dup of the world, one MPI_Allreduce of 8 int64 with
//     MPI_MIN on the duplicate, MPI_Comm_free (with the run-time backend
//     through the public mpiabi binding, on the library Hataori loaded; with
//     the cgo backend from C, on the MPI the program is linked with);
//   - Pmap: an 8-item hataori.Pmap with a trivial callback, MPI-only (nil
//     domain, default Options), on the world communicator;
//   - hybrid: the same Pmap with NewLocalDomain (opened once, before the
//     repetitions) and Mode Outer on every rank;
//   - Broadcast: hataori.Broadcast of one int64 (8 bytes) from rank 0.
//
// Every repetition runs the four once each, in an order shuffled from one
// repetition to the next, each after a barrier; a repetition's figure for an
// operation is the longest time any rank spent in it (an Allreduce MAX
// after the timing). After -warmup discarded repetitions, rank 0 prints the
// median of -reps repetitions of each, the ratios to raw (aim <= 2.0), and
// the items each rank's slots ran in the Pmap calls (Options.Stats), with
// the median of the root's CallStats.Wall (the call's time after its
// preflight: dispatch, results and drain).
//
// Build with -tags mpirt (CGO_ENABLED=0 works; run under mpirun with
// MPI_RT_LIB set) or with -tags mpicgo and CC=mpicc (Open MPI) or
// CC=mpicc.mpich (MPICH); scripts/bench-fixed.sh runs it at 2 and 4 ranks
// under Open MPI and MPICH.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/scripts/bench/internal/stats"
)

// raw is the raw MPI on the library Hataori uses, on MPI_COMM_WORLD.
type raw interface {
	backend() string
	version() string
	barrier()
	maxInt64(v int64) int64
	// dupAllreduceFree is the baseline: MPI_Comm_dup, MPI_Allreduce of
	// vec into out (8 int64, MPI_MIN) on the duplicate, MPI_Comm_free.
	dupAllreduceFree(vec, out *[8]int64)
}

func init() { runtime.LockOSThread() }

// pmapConfig is one Pmap configuration and the items its calls ran.
type pmapConfig struct {
	name    string
	dom     *hataori.Domain
	mode    hataori.LocalMode
	perRank []int64   // items per rank, summed over the measured calls
	slots   [][]int64 // the last call's items per rank and slot
	walls   []float64 // CallStats.Wall on the root, µs per measured call
}

func main() {
	reps := flag.Int("reps", 21, "measured repetitions (the median is reported; at least 15 for the issue's figure)")
	warmup := flag.Int("warmup", 5, "discarded repetitions before the measured ones")
	nItems := flag.Int("items", 8, "items per Pmap call")
	flag.Parse()
	world, mpi, finalize, err := openWorld()
	if err != nil {
		log.Fatal(err)
	}
	defer finalize()
	rank, err := world.Rank()
	if err != nil {
		log.Fatal(err)
	}
	size, err := world.Size()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	dom, err := hataori.NewLocalDomain()
	must(err)
	defer func() { _ = dom.Close() }()
	workers := mpi.maxInt64(int64(dom.Workers()))
	minWorkers := -mpi.maxInt64(-int64(dom.Workers()))

	var vec, out [8]int64
	rawOp := func() {
		for i := range vec {
			vec[i] = int64(rank*8 + i)
		}
		mpi.dupAllreduceFree(&vec, &out)
		if out[7] != 7 {
			log.Fatalf("raw Allreduce: got %d, want 7", out[7])
		}
	}
	items := hataori.None[[]int]()
	if rank == 0 {
		xs := make([]int, *nItems)
		for i := range xs {
			xs[i] = i
		}
		items = hataori.Some(xs)
	}
	configs := []*pmapConfig{
		{name: "MPI-only", perRank: make([]int64, size)},
		{name: "hybrid", dom: dom, mode: hataori.Outer, perRank: make([]int64, size)},
	}
	measuring := false
	pmap := func(c *pmapConfig) func() {
		return func() {
			var st hataori.CallStats
			res, err := hataori.Pmap(ctx, world, c.dom, hataori.Options{Stats: &st, Mode: c.mode}, items, func(x int) (int, error) { return x + 1, nil })
			must(err)
			if rank == 0 {
				if len(res) != *nItems || res[*nItems-1] != *nItems {
					log.Fatalf("Pmap: wrong results %v", res)
				}
				if measuring {
					for r, row := range st.Items {
						for _, v := range row {
							c.perRank[r] += v
						}
					}
					c.slots = st.Items
					c.walls = append(c.walls, float64(st.Wall.Nanoseconds())/1e3)
				}
			}
		}
	}
	bcast := func() {
		m := hataori.None[int64]()
		if rank == 0 {
			m = hataori.Some(int64(0x0123456789abcdef))
		}
		v, err := hataori.Broadcast(ctx, world, 0, m)
		must(err)
		if v != 0x0123456789abcdef {
			log.Fatalf("Broadcast: got %#x", v)
		}
	}

	names := []string{
		"raw: Comm_dup + Allreduce(8 int64, MIN) + Comm_free",
		fmt.Sprintf("Pmap, %d trivial items, MPI-only", *nItems),
		fmt.Sprintf("Pmap, %d trivial items, hybrid (Outer)", *nItems),
		"Broadcast of one int64 (8 B)",
	}
	ops := []func(){rawOp, pmap(configs[0]), pmap(configs[1]), bcast}
	d := make([][]float64, len(ops)) // µs per repetition, the slowest rank's
	// The order is shuffled per repetition, the same on every rank (a
	// fixed seed), so that no operation always follows the same one.
	rng := rand.New(rand.NewPCG(12, 2))
	order := []int{0, 1, 2, 3}
	for rep := 0; rep < *warmup+*reps; rep++ {
		measuring = rep >= *warmup
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			mpi.barrier()
			t0 := time.Now()
			ops[i]()
			el := time.Since(t0).Nanoseconds()
			slowest := mpi.maxInt64(el)
			if measuring {
				d[i] = append(d[i], float64(slowest)/1e3)
			}
		}
	}
	if rank != 0 {
		return
	}
	med := make([]float64, len(d))
	for i := range d {
		med[i] = stats.Median(d[i])
	}
	r := med[0]
	fmt.Printf("fixed cost: %d ranks, %s (%s), domain workers per rank %d–%d, %d measured repetitions after %d warm-up, interleaved (order shuffled), slowest rank per repetition, median\n",
		size, mpi.version(), mpi.backend(), minWorkers, workers, *reps, *warmup)
	for i := range d {
		fmt.Printf("  %-52s median %8.1f µs (min %7.1f, max %8.1f)\n", names[i], med[i], slices.Min(d[i]), slices.Max(d[i]))
	}
	for _, c := range configs {
		fmt.Printf("  %-8s Pmap after the preflight (root CallStats.Wall) median %.1f µs; items per rank over the %d measured calls %v; last call's items per rank and slot %v\n",
			c.name, stats.Median(c.walls), *reps, c.perRank, c.slots)
	}
	// The summary line scripts/bench-fixed.sh collects.
	fmt.Printf("  fixed %d ranks: raw %.1f µs, Pmap %.1f µs (%.2fx raw), hybrid %.1f µs (%.2fx raw), Broadcast %.1f µs (%.2fx raw); aim <= 2.0; items per rank MPI-only %v, hybrid %v\n",
		size, r, med[1], med[1]/r, med[2], med[2]/r, med[3], med[3]/r, configs[0].perRank, configs[1].perRank)
}
