//go:build (mpirt || mpicgo) && linux

// Command stream measures hataori.PmapStream against hataori.Pmap on the
// same trivial items (x+1), one call per launch, so that the root's peak
// resident memory (getrusage ru_maxrss) is the call's own: the stream
// generates its items lazily and sums the results in its sink; Pmap takes
// the items as one slice and returns the result table. It prints one
// RESULT line on the root: the call, the configuration, items, wall time
// per item, the root's peak RSS and the items every rank ran.
//
//	MPI_RT_LIB=… mpirun -n 2 ./stream -call stream -n 20000000 -config hybrid
package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hataori/hataori-go/hataori"
)

func init() { runtime.LockOSThread() }

func main() {
	call := flag.String("call", "stream", "stream (PmapStream) or pmap (Pmap)")
	n := flag.Int("n", 20_000_000, "items")
	config := flag.String("config", "hybrid", "mpi-only (nil domain) or hybrid (NewLocalDomain)")
	window := flag.Int("window", 0, "Options.Window (0: the default)")
	profile := flag.String("cpuprofile", "", "write the root's CPU profile of the call to this file")
	flag.Parse()
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		fail(err)
	}
	defer hataori.Finalize()
	world, err := hataori.World()
	if err != nil {
		fail(err)
	}
	rank, _ := world.Rank()
	var d *hataori.Domain
	if *config == "hybrid" {
		if d, err = hataori.NewLocalDomain(); err != nil {
			fail(err)
		}
		defer d.Close()
	}
	var stats hataori.CallStats
	opts := hataori.Options{Stats: &stats, Window: *window}
	inc := func(_ context.Context, x int) (int, error) { return x + 1, nil }
	var sum int
	if *profile != "" && rank == 0 {
		f, err := os.Create(*profile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	switch *call {
	case "stream":
		items := hataori.None[iter.Seq[int]]()
		var sink func(int, int) error
		if rank == 0 {
			items = hataori.Some(iter.Seq[int](func(yield func(int) bool) {
				for i := range *n {
					if !yield(i) {
						return
					}
				}
			}))
			sink = func(_ int, u int) error { sum += u; return nil }
		}
		err = hataori.PmapStream(context.Background(), world, d, opts, items, inc, sink)
	case "pmap":
		items := hataori.None[[]int]()
		if rank == 0 {
			in := make([]int, *n)
			for i := range in {
				in[i] = i
			}
			items = hataori.Some(in)
		}
		var out []int
		out, err = hataori.PmapContext(context.Background(), world, d, opts, items, inc)
		for _, u := range out {
			sum += u
		}
	default:
		fail(fmt.Errorf("unknown -call %q", *call))
	}
	el := time.Since(start)
	if err != nil {
		fail(err)
	}
	if rank != 0 {
		return
	}
	if want := *n * (*n + 1) / 2; sum != want {
		fail(fmt.Errorf("sum %d, want %d", sum, want))
	}
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	items := make([]int64, len(stats.Items))
	for r, s := range stats.Items {
		for _, v := range s {
			items[r] += v
		}
	}
	fmt.Printf("RESULT call=%s config=%s n=%d ns_per_item=%.1f rss_mb=%.1f items_per_rank=%v sizes=%v\n",
		*call, *config, *n, float64(el.Nanoseconds())/float64(*n), float64(ru.Maxrss)/1024, items, stats.Sizes)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stream:", err)
	os.Exit(1)
}
