//go:build mpirt || mpicgo

// Command benchplace measures Hataori's data collectives against raw MPI
// in the same run, on the same communicator and buffers' sizes:
//
//   - Broadcast of a []float64 and of a []byte, against a raw MPI_Bcast of
//     the same number of bytes (and a raw point-to-point fan-out);
//   - Gather of one value per rank to rank 0, against raw MPI_Send/MPI_Recv
//     of the same bytes (and the Bcast figure, for scale);
//   - the frame layout: a header and payload as one message against the
//     same bytes as two messages (header, then payload), as a ping-pong.
//
// Run it under mpirun with at least two ranks; rank 0 prints the table.
// scripts/bench-collectives.sh builds and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"sort"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

func init() { runtime.LockOSThread() }

var world mpi.Handle

func main() {
	small := flag.Int("small", 1<<20, "small payload in bytes")
	large := flag.Int("large", 64<<20, "large payload in bytes")
	reps := flag.Int("reps", 20, "repetitions for the small payload (the large one uses reps/5, at least 3)")
	flag.Parse()
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		log.Fatal(err)
	}
	defer func() { _ = hataori.Finalize() }()
	comm, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	world = mpi.World()
	rank, _ := comm.Rank()
	size, _ := comm.Size()
	if size < 2 {
		log.Fatal("benchplace needs at least 2 ranks")
	}
	if rank == 0 {
		fmt.Printf("data-collective benchmark: %d ranks, backend %s (%s), median of repetitions, bandwidth = payload bytes delivered / time\n",
			size, hataori.Backend(), mpiName())
	}
	for _, n := range []int{*small, *large} {
		r := *reps
		if n > 8<<20 {
			r = max(3, r/5)
		}
		runSize(comm, rank, size, n, r)
	}
	framing(rank, *reps*5)
}

func mpiName() string {
	if s := mpi.LinkedMPI(); s != "" {
		return s
	}
	if s := os.Getenv("MPI_RT_LIB"); s != "" {
		return s
	}
	return "?"
}

// timeIt runs op reps times (after one warm-up), each between barriers, and
// returns the median duration.
func timeIt(reps int, op func()) time.Duration {
	op()
	d := make([]time.Duration, reps)
	for i := range d {
		must(mpi.Barrier(world))
		t0 := time.Now()
		op()
		must(mpi.Barrier(world))
		d[i] = time.Since(t0)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[reps/2]
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func mbps(bytes int, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e6 }

func runSize(comm hataori.Comm, rank, size, n, reps int) {
	ctx := context.Background()
	raw := make([]byte, n)
	f64 := make([]float64, n/8)
	for i := range f64 {
		f64[i] = float64(i)
	}
	bytesVal := make([]byte, n)
	for i := range raw {
		raw[i] = byte(i)
		bytesVal[i] = byte(i * 7)
	}

	rawBcast := timeIt(reps, func() { must(mpi.Bcast(world, raw, 0)) })
	rawBcastFresh := timeIt(reps, func() {
		buf := raw
		if rank != 0 {
			buf = make([]byte, n)
		}
		must(mpi.Bcast(world, buf, 0))
	})
	fanout := timeIt(reps, func() {
		if rank == 0 {
			for d := 1; d < size; d++ {
				must(mpi.Send(world, raw, d, 9))
			}
		} else {
			_, err := mpi.Recv(world, raw, 0, 9)
			must(err)
		}
	})
	bcastF := timeIt(reps, func() {
		m := hataori.None[[]float64]()
		if rank == 0 {
			m = hataori.Some(f64)
		}
		_, err := hataori.Broadcast(ctx, comm, 0, m)
		must(err)
	})
	bcastB := timeIt(reps, func() {
		m := hataori.None[[]byte]()
		if rank == 0 {
			m = hataori.Some(bytesVal)
		}
		_, err := hataori.Broadcast(ctx, comm, 0, m)
		must(err)
	})
	rawGather := timeIt(reps, func() {
		if rank == 0 {
			for s := 1; s < size; s++ {
				_, err := mpi.Recv(world, raw, s, 10)
				must(err)
			}
		} else {
			must(mpi.Send(world, raw, 0, 10))
		}
	})
	rawGatherFresh := timeIt(reps, func() {
		if rank == 0 {
			for s := 1; s < size; s++ {
				_, err := mpi.Recv(world, make([]byte, n), s, 10)
				must(err)
			}
		} else {
			must(mpi.Send(world, raw, 0, 10))
		}
	})
	gatherF := timeIt(reps, func() {
		_, err := hataori.Gather(ctx, comm, 0, f64)
		must(err)
	})
	gatherB := timeIt(reps, func() {
		_, err := hataori.Gather(ctx, comm, 0, bytesVal)
		must(err)
	})
	if rank != 0 {
		return
	}
	label := fmt.Sprintf("%d MiB", n>>20)
	if n < 1<<20 {
		label = fmt.Sprintf("%d B", n)
	}
	fmt.Printf("\n%s payload, %d ranks, %d repetitions\n", label, size, reps)
	fmt.Printf("  %-32s %10s %10s  %s\n", "operation", "ms", "MB/s", "ratio to raw")
	row := func(name string, d time.Duration, delivered int, base time.Duration) {
		fmt.Printf("  %-32s %10.3f %10.0f  %.2fx\n", name, float64(d.Microseconds())/1e3, mbps(delivered, d), float64(d)/float64(base))
	}
	row("raw MPI_Bcast", rawBcast, n, rawBcast)
	row("raw MPI_Bcast, fresh buffers", rawBcastFresh, n, rawBcast)
	row("raw Send fan-out (p2p bcast)", fanout, n, rawBcast)
	row("Broadcast []float64", bcastF, n, rawBcast)
	row("Broadcast []byte", bcastB, n, rawBcast)
	g := n * (size - 1)
	row("raw Send/Recv gather", rawGather, g, rawGather)
	row("raw Send/Recv, fresh buffers", rawGatherFresh, g, rawGather)
	row("Gather []float64", gatherF, g, rawGather)
	row("Gather []byte", gatherB, g, rawGather)
	fmt.Printf("  Broadcast []float64 / raw MPI_Bcast into fresh buffers: %.2fx; Gather []float64 / raw gather into fresh buffers: %.2fx\n",
		float64(bcastF)/float64(rawBcastFresh), float64(gatherF)/float64(rawGatherFresh))
	fmt.Printf("  (ratios are times against the first raw row of each block; \"fresh buffers\" allocates each receive buffer, as a call returning new values must)\n")
}

// framing compares one message of header+payload with two messages
// (header, then payload) between ranks 0 and 1, as a ping-pong.
func framing(rank, reps int) {
	const hdr = 24
	if rank > 1 {
		// Ranks beyond 1 only join the barriers.
		for _, n := range []int{64, 1 << 20} {
			_ = n
			timeIt(reps, func() {})
			timeIt(reps, func() {})
		}
		return
	}
	peer := 1 - rank
	if rank == 0 {
		fmt.Printf("\nframe layout, ping-pong between ranks 0 and 1, %d repetitions (round trip)\n", reps)
	}
	for _, n := range []int{64, 1 << 20} {
		one := make([]byte, hdr+n)
		h := make([]byte, hdr)
		p := make([]byte, n)
		oneMsg := timeIt(reps, func() {
			if rank == 0 {
				must(mpi.Send(world, one, peer, 3))
				_, err := mpi.Recv(world, one, peer, 3)
				must(err)
			} else {
				st, err := mpi.Probe(world, peer, 3)
				must(err)
				_, err = mpi.Recv(world, one[:st.Count], peer, 3)
				must(err)
				must(mpi.Send(world, one, peer, 3))
			}
		})
		twoMsg := timeIt(reps, func() {
			if rank == 0 {
				must(mpi.Send(world, h, peer, 3))
				must(mpi.Send(world, p, peer, 4))
				_, err := mpi.Recv(world, h, peer, 3)
				must(err)
				_, err = mpi.Recv(world, p, peer, 4)
				must(err)
			} else {
				_, err := mpi.Recv(world, h, peer, 3)
				must(err)
				_, err = mpi.Recv(world, p, peer, 4)
				must(err)
				must(mpi.Send(world, h, peer, 3))
				must(mpi.Send(world, p, peer, 4))
			}
		})
		if rank == 0 {
			fmt.Printf("  payload %8d B: one message (probe+recv) %8.1f µs, two messages %8.1f µs, two/one %.2fx\n",
				n, float64(oneMsg.Nanoseconds())/1e3, float64(twoMsg.Nanoseconds())/1e3, float64(twoMsg)/float64(oneMsg))
		}
	}
}
