//go:build mpirt

// Command fixed measures the fixed cost of a cheap collective call against
// the raw MPI collectives such a call needs, in the same run:
//
//   - raw: MPI_Comm_dup of the world, one MPI_Allreduce of 8 int64 with
//     MPI_MIN on the duplicate, MPI_Comm_free (through the public mpiabi
//     binding, on the library Hataori's run-time backend loaded);
//   - Pmap: an 8-item hataori.Pmap with a trivial callback, MPI-only (nil
//     domain, default Options), on the world communicator;
//   - Broadcast: hataori.Broadcast of one int64 (8 bytes) from rank 0.
//
// Every repetition runs the three once each, in an order shuffled from one
// repetition to the next, each after a barrier; a repetition's figure for an
// operation is the longest time any rank spent in it (an Allreduce MAX
// after the timing). After -warmup discarded repetitions, rank 0 prints the
// median of -reps repetitions of each, the ratios Pmap/raw and
// Broadcast/raw (aim <= 2.0), and the items each rank's slots ran in the
// Pmap calls (Options.Stats), with the median of the root's CallStats.Wall
// (the call's time after its preflight: dispatch, results and drain).
//
// Build with -tags mpirt (CGO_ENABLED=0 works), run under mpirun with
// MPI_RT_LIB set; scripts/bench-fixed.sh runs it at 2 and 4 ranks under
// Open MPI and MPICH.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/scripts/bench/internal/rawmpi"
	"github.com/hataori/hataori-go/scripts/bench/internal/stats"
)

func init() { runtime.LockOSThread() }

func main() {
	reps := flag.Int("reps", 21, "measured repetitions (the median is reported; at least 15 for the issue's figure)")
	warmup := flag.Int("warmup", 5, "discarded repetitions before the measured ones")
	nItems := flag.Int("items", 8, "items per Pmap call")
	flag.Parse()
	world, lib, w, finalize, err := rawmpi.World()
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

	var vec, out [8]int64
	raw := func() {
		dup, err := lib.CommDup(w)
		must(err)
		for i := range vec {
			vec[i] = int64(rank*8 + i)
		}
		must(lib.Allreduce(unsafe.Pointer(&vec), unsafe.Pointer(&out), len(vec), lib.Int64, lib.Min, dup))
		must(lib.CommFree(&dup))
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
	perRank := make([]int64, size) // items per rank, summed over the measured calls
	var slots [][]int64            // the last call's items per rank and slot
	var walls []float64            // CallStats.Wall on the root, µs per measured call
	measuring := false
	pmap := func() {
		var st hataori.CallStats
		res, err := hataori.Pmap(ctx, world, nil, hataori.Options{Stats: &st}, items, func(x int) (int, error) { return x + 1, nil })
		must(err)
		if rank == 0 {
			if len(res) != *nItems || res[*nItems-1] != *nItems {
				log.Fatalf("Pmap: wrong results %v", res)
			}
			if measuring {
				for r, row := range st.Items {
					for _, v := range row {
						perRank[r] += v
					}
				}
				slots = st.Items
				walls = append(walls, float64(st.Wall.Nanoseconds())/1e3)
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

	ops := []func(){raw, pmap, bcast}
	d := make([][]float64, len(ops)) // µs per repetition, the slowest rank's
	// The order is shuffled per repetition, the same on every rank (a
	// fixed seed), so that no operation always follows the same one.
	rng := rand.New(rand.NewPCG(12, 2))
	order := []int{0, 1, 2}
	for rep := 0; rep < *warmup+*reps; rep++ {
		measuring = rep >= *warmup
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			must(lib.Barrier(w))
			t0 := time.Now()
			ops[i]()
			el := time.Since(t0).Nanoseconds()
			var slowest int64
			must(lib.Allreduce(unsafe.Pointer(&el), unsafe.Pointer(&slowest), 1, lib.Int64, lib.Max, w))
			if measuring {
				d[i] = append(d[i], float64(slowest)/1e3)
			}
		}
	}
	if rank != 0 {
		return
	}
	ver, _ := lib.LibraryVersion()
	ver, _, _ = strings.Cut(ver, "\n")
	ver, _, _ = strings.Cut(ver, ",")
	r, p, b := stats.Median(d[0]), stats.Median(d[1]), stats.Median(d[2])
	fmt.Printf("fixed cost: %d ranks, %s (%s), %d measured repetitions after %d warm-up, interleaved (order shuffled), slowest rank per repetition, median\n",
		size, ver, os.Getenv(mpiabi.EnvVar), *reps, *warmup)
	fmt.Printf("  %-52s median %8.1f µs (min %7.1f, max %8.1f)\n", "raw: Comm_dup + Allreduce(8 int64, MIN) + Comm_free", r, slices.Min(d[0]), slices.Max(d[0]))
	fmt.Printf("  %-52s median %8.1f µs (min %7.1f, max %8.1f)\n", fmt.Sprintf("Pmap, %d trivial items, MPI-only", *nItems), p, slices.Min(d[1]), slices.Max(d[1]))
	fmt.Printf("  %-52s median %8.1f µs (min %7.1f, max %8.1f)\n", "Broadcast of one int64 (8 B)", b, slices.Min(d[2]), slices.Max(d[2]))
	fmt.Printf("  %-52s median %8.1f µs\n", "  of which after the preflight (root CallStats.Wall)", stats.Median(walls))
	fmt.Printf("  Pmap items per rank over the %d measured calls %v; last call's items per rank and slot %v\n", *reps, perRank, slots)
	// The summary line scripts/bench-fixed.sh collects.
	fmt.Printf("  fixed %d ranks: raw %.1f µs, Pmap %.1f µs (%.2fx raw), Broadcast %.1f µs (%.2fx raw); aim <= 2.0; Pmap items per rank %v\n",
		size, r, p, p/r, b, b/r, perRank)
}
