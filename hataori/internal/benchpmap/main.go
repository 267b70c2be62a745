//go:build mpirt || mpicgo

// Command benchpmap measures hataori.Pmap under mpirun and prints, from
// rank 0, each figure next to a baseline measured in the same run:
//
//	skew      64 heavy-tailed sleep items: makespan against the ideal bound
//	          max(total/ranks, longest), a zero-overhead greedy schedule of
//	          the same items in the same order (computed here), and a static
//	          contiguous split executed for real
//	overhead  20,000 trivial items, batch 1 and 64: items/s and µs/item
//	          next to the MPI ping-pong round trip between ranks 0 and 1
//	payload   1 MiB []float64 results (batch 1, the root's own lane held
//	          back so results cross ranks): per-result time and bandwidth of
//	          the whole call and of the remote lane against raw MPI doing the
//	          same work (rank 1 computes a fresh result and sends it, rank 0
//	          receives it into a fresh slice and keeps it), round by round;
//	          the transport ceiling (one buffer reused) for context
//
// Run it through scripts/bench-pmap.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"

	"github.com/hataori/hataori-go/hataori"
)

func init() { runtime.LockOSThread() }

// env is one rank's benchmark context.
type env struct {
	world      hataori.Comm
	rank, size int
}

func main() {
	which := flag.String("case", "all", "skew, overhead, payload or all")
	flag.Parse()
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		fail(err)
	}
	defer hataori.Finalize()
	world, err := hataori.World()
	if err != nil {
		fail(err)
	}
	e := &env{world: world}
	if e.rank, err = world.Rank(); err != nil {
		fail(err)
	}
	if e.size, err = world.Size(); err != nil {
		fail(err)
	}
	cases := map[string]func(*env) error{"skew": skew, "overhead": overhead, "payload": payload}
	for _, name := range []string{"skew", "overhead", "payload"} {
		if *which != "all" && *which != name {
			continue
		}
		if err := cases[name](e); err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
	}
}

// printf prints on rank 0 only.
func (e *env) printf(format string, args ...any) {
	if e.rank == 0 {
		fmt.Printf(format, args...)
	}
}

// items returns 0..n-1 on rank 0 and None elsewhere.
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

var ctx = context.Background()

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchpmap:", err)
	os.Exit(1)
}
