// Command pingpong measures ping-pong latency and bandwidth between ranks 0
// and 1 through Hataori's MPI transport (hataori.Comm's Send and Recv, which
// call the backend compiled in), for comparison with scripts/bench/pingpong.c.
// Build it with -tags mpirt (CGO_ENABLED=0 works) or -tags mpicgo
// (CC=mpicc), run it with 2 ranks:
//
//	mpirun -n 2 ./pingpong
//
// Rank 0 prints one line per message size:
//
//	RESULT size=8 iters=100000 rtt_us=0.512 mbps=31.2
//
// rtt_us is the best (over -reps repetitions) mean round-trip time and mbps
// the matching one-way bandwidth in MB/s (10^6 bytes).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// MPI is used from the main goroutine, which must stay on the thread that
// initialises MPI.
func init() { runtime.LockOSThread() }

func main() {
	sizes := flag.String("sizes", "8,1024,1048576", "comma-separated message sizes in bytes")
	reps := flag.Int("reps", 5, "repetitions per size (the best is reported)")
	scale := flag.Float64("scale", 1, "multiplies the iteration counts")
	flag.Parse()
	if err := run(*sizes, *reps, *scale); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}

// iterations returns how many round trips to time for a message size.
func iterations(size int, scale float64) int {
	n := 20000
	switch {
	case size >= 1<<20:
		n = 500
	case size >= 1<<16:
		n = 2000
	}
	return max(1, int(float64(n)*scale))
}

func run(sizeList string, reps int, scale float64) error {
	// InitThread also checks that the launcher and the library agree on
	// the number of ranks.
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		return err
	}
	defer func() { _ = hataori.Finalize() }()
	w, err := hataori.World()
	if err != nil {
		return err
	}
	rank, err := w.Rank()
	if err != nil {
		return err
	}
	size, err := w.Size()
	if err != nil {
		return err
	}
	if size < 2 {
		return fmt.Errorf("needs at least 2 ranks, got %d", size)
	}
	for _, f := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return fmt.Errorf("bad size %q", f)
		}
		iters := iterations(n, scale)
		buf := make([]byte, n)
		best := time.Duration(1 << 62)
		for r := 0; r < reps; r++ {
			if err := w.Barrier(); err != nil {
				return err
			}
			if _, err := pingpong(w, rank, buf, max(1, iters/10)); err != nil { // warm-up
				return err
			}
			d, err := pingpong(w, rank, buf, iters)
			if err != nil {
				return err
			}
			best = min(best, d)
		}
		if rank == 0 {
			rtt := best.Seconds() / float64(iters)
			fmt.Printf("RESULT size=%d iters=%d rtt_us=%.3f mbps=%.1f\n", n, iters, rtt*1e6, float64(n)/(rtt/2)/1e6)
		}
	}
	return nil
}

// pingpong times iters round trips of buf between ranks 0 and 1.
func pingpong(w hataori.Comm, rank int, buf []byte, iters int) (time.Duration, error) {
	start := time.Now()
	switch rank {
	case 0:
		for i := 0; i < iters; i++ {
			if err := w.Send(buf, 1, 1); err != nil {
				return 0, err
			}
			if _, err := w.Recv(buf, 1, 1); err != nil {
				return 0, err
			}
		}
	case 1:
		for i := 0; i < iters; i++ {
			if _, err := w.Recv(buf, 0, 1); err != nil {
				return 0, err
			}
			if err := w.Send(buf, 0, 1); err != nil {
				return 0, err
			}
		}
	}
	return time.Since(start), nil
}
