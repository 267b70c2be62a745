//go:build mpirt || mpicgo

// Command benchbulk measures bulk results (1 MiB and 512 KiB []float64)
// through hataori.Pmap and hataori.PmapStream under mpirun, printing from
// rank 0 one machine-readable line per figure (for scripts/bench-bulk.sh),
// each with the items every rank ran:
//
//	rss     3,000 results of 1 MiB []float64 through PmapStream (zero
//	        Options but Window 32, -reuse for ReuseBuffers), the sink
//	        checking two elements of each and dropping it; the root's peak
//	        RSS (getrusage Maxrss) after the call: one launch per setting,
//	        since Maxrss is the process's peak
//	remote  400 items whose remote callback returns one of 4 prepared
//	        1 MiB []float64 results (no compute, no fresh memory on the
//	        sender) while the root's own slot sleeps 2 ms per item, so the
//	        remote rank's time per result is its result path (the 1 MiB
//	        RESULT to the root, the next TASK back): its steady-state time
//	        per result (first to last callback start over calls-1) as a
//	        bandwidth, for PmapStream with and without ReuseBuffers and
//	        for Pmap, 3 calls each after a warm-up, interleaved (medians)
//	scale   1,000 results of 512 KiB []float64, each a fresh slice filled
//	        by the callback, zero Options: the call's wall time (median of
//	        -rounds calls); the script runs it on 1 and 2 ranks
package main

import (
	"context"
	"flag"
	"fmt"
	"iter"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/scripts/bench/internal/gather"
)

func init() { runtime.LockOSThread() }

const mib = 1 << 20

type env struct {
	world      hataori.Comm
	rank, size int
}

func main() {
	which := flag.String("case", "remote", "rss, remote or scale")
	reuse := flag.Bool("reuse", false, "rss: Options.ReuseBuffers")
	rounds := flag.Int("rounds", 3, "remote, scale: measured calls per variant")
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
	size, _ := world.Size()
	e := &env{world: world, rank: rank, size: size}
	switch *which {
	case "rss":
		err = e.rss(*reuse)
	case "remote":
		err = e.remote(*rounds)
	case "scale":
		err = e.scale(*rounds)
	default:
		err = fmt.Errorf("unknown case %q", *which)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchbulk:", err)
	os.Exit(1)
}

// seq is 0..n-1 on the root, None elsewhere.
func (e *env) seq(n int) hataori.Maybe[iter.Seq[int]] {
	if e.rank != 0 {
		return hataori.None[iter.Seq[int]]()
	}
	return hataori.Some(iter.Seq[int](func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}))
}

func (e *env) items(n int) hataori.Maybe[[]int] {
	if e.rank != 0 {
		return hataori.None[[]int]()
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return hataori.Some(xs)
}

func fill(v []float64, x int) []float64 {
	for i := range v {
		v[i] = float64(x) + float64(i)
	}
	return v
}

func ok(v []float64, x int) bool {
	return len(v) > 0 && v[0] == float64(x) && v[len(v)-1] == float64(x)+float64(len(v)-1)
}

// rss: 3,000 fresh 1 MiB results through PmapStream, Window 32.
func (e *env) rss(reuse bool) error {
	const n = 3000
	var st hataori.CallStats
	opts := hataori.Options{Window: 32, ReuseBuffers: reuse, Stats: &st}
	bad := 0
	var sink func(int, []float64) error
	if e.rank == 0 {
		sink = func(i int, v []float64) error {
			if !ok(v, i) {
				bad++
			}
			return nil
		}
	}
	start := time.Now()
	err := hataori.PmapStream(context.Background(), e.world, nil, opts, e.seq(n), func(_ context.Context, x int) ([]float64, error) {
		return fill(make([]float64, mib/8), x), nil
	}, sink)
	el := time.Since(start)
	if err != nil {
		return err
	}
	if e.rank == 0 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return err
		}
		if bad > 0 {
			return fmt.Errorf("%d wrong results", bad)
		}
		fmt.Printf("RSS reuse=%v maxrss_mb=%.1f results=%d window=32 elapsed_ms=%.0f items=%v\n", reuse, float64(ru.Maxrss)/1024, n, ms(el), st.Items)
	}
	return nil
}

// remote: the remote rank's result path for 1 MiB results.
func (e *env) remote(rounds int) error {
	if e.size < 2 {
		return fmt.Errorf("needs 2 ranks")
	}
	const n = 400
	prepared := make([][]float64, 4)
	for k := range prepared {
		prepared[k] = fill(make([]float64, mib/8), k)
	}
	var first, last, calls atomic.Int64
	var t0 time.Time
	f := func(_ context.Context, x int) ([]float64, error) {
		if e.rank == 0 {
			time.Sleep(2 * time.Millisecond)
			return prepared[x%4], nil
		}
		now := time.Since(t0).Nanoseconds()
		first.CompareAndSwap(0, now)
		last.Store(now)
		calls.Add(1)
		return prepared[x%4], nil
	}
	check := func(i int, v []float64) bool {
		return len(v) == mib/8 && v[0] == float64(i%4) && v[len(v)-1] == float64(i%4)+float64(len(v)-1)
	}
	variants := []string{"stream-reuse", "stream-fresh", "pmap"}
	per := map[string][]float64{}
	items := map[string][][]int64{}
	for round := 0; round <= rounds; round++ {
		for _, v := range variants {
			first.Store(0)
			calls.Store(0)
			var st hataori.CallStats
			opts := hataori.Options{Stats: &st, Window: 64, ReuseBuffers: v == "stream-reuse"}
			if err := e.world.Barrier(); err != nil {
				return err
			}
			t0 = time.Now()
			bad := 0
			var err error
			if v == "pmap" {
				var out [][]float64
				out, err = hataori.PmapContext(context.Background(), e.world, nil, opts, e.items(n), f)
				for i, r := range out {
					if !check(i, r) {
						bad++
					}
				}
			} else {
				var sink func(int, []float64) error
				if e.rank == 0 {
					sink = func(i int, r []float64) error {
						if !check(i, r) {
							bad++
						}
						return nil
					}
				}
				err = hataori.PmapStream(context.Background(), e.world, nil, opts, e.seq(n), f, sink)
			}
			if err != nil {
				return err
			}
			if bad > 0 {
				return fmt.Errorf("%s: %d wrong results", v, bad)
			}
			lane, err := gather.RemotePerItem(e.world, e.rank, e.size, first.Load(), last.Load(), calls.Load())
			if err != nil {
				return err
			}
			if round > 0 && e.rank == 0 && lane > 0 {
				per[v] = append(per[v], mib/lane.Seconds()/1e6)
				items[v] = st.Items
			}
		}
	}
	if e.rank == 0 {
		for _, v := range variants {
			fmt.Printf("REMOTE variant=%s mbps=%.0f rounds=%d items=%v\n", v, median(per[v]), len(per[v]), items[v])
		}
	}
	return nil
}

// scale: 1,000 fresh 512 KiB results, zero Options.
func (e *env) scale(rounds int) error {
	const n = 1000
	var times []float64
	var items [][]int64
	for round := 0; round <= rounds; round++ {
		runtime.GC()
		var st hataori.CallStats
		if err := e.world.Barrier(); err != nil {
			return err
		}
		start := time.Now()
		out, err := hataori.Pmap(context.Background(), e.world, nil, hataori.Options{Stats: &st}, e.items(n), func(x int) ([]float64, error) {
			return fill(make([]float64, mib/16), x), nil
		})
		el := time.Since(start)
		if err != nil {
			return err
		}
		for i, v := range out {
			if !ok(v, i) {
				return fmt.Errorf("wrong result %d", i)
			}
		}
		if round > 0 {
			times = append(times, ms(el))
			items = st.Items
		}
	}
	if e.rank == 0 {
		fmt.Printf("SCALE ranks=%d ms=%.1f min=%.1f max=%.1f items=%v\n", e.size, median(times), slices.Min(times), slices.Max(times), items)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
