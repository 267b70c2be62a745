//go:build mpirt

// Command collectives measures Hataori's data collectives against raw MPI
// in the same run, on the same communicator and buffers' sizes:
//
//   - Broadcast of a []float64 and of a []byte, against a raw MPI_Bcast of
//     the same number of bytes into one reused buffer and into a fresh
//     buffer of each type (allocated for every call on the receivers, as a
//     call returning new values must), and a raw point-to-point fan-out;
//   - Gather of one value per rank to rank 0, against raw MPI_Send/MPI_Recv
//     of the same bytes, into one reused buffer and into fresh ones;
//   - the frame layout: a header and payload as one message against the
//     same bytes as two messages (header, then payload), as a ping-pong.
//
// Every operation of a payload size runs once per repetition, in an order
// shuffled from one repetition to the next (one warm-up repetition first),
// between barriers; the median of the repetitions is reported, so that load
// from other processes hurts the raw baselines and Hataori's calls alike.
//
// The raw baselines call MPI through the public MPIABI binding (package
// mpiabi) on the handle of Hataori's world communicator (Comm.Handle), in
// the library Hataori's run-time backend loaded (mpiabi.Load returns the
// same *Lib), so the program needs -tags mpirt and MPI_RT_LIB. (It used to
// live in hataori/internal/benchplace and could also be built with the cgo
// backend through the private transport; scripts/bench/pingpong.c is the
// C reference of the transport now.)
//
// Run it under mpirun with at least two ranks; rank 0 prints the tables.
// scripts/bench-collectives.sh builds and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/scripts/bench/internal/rawmpi"
	"github.com/hataori/hataori-go/scripts/bench/internal/stats"
)

func init() { runtime.LockOSThread() }

var (
	lib   *mpiabi.Lib
	world mpiabi.Comm
)

func main() {
	small := flag.Int("small", 1<<20, "small payload in bytes")
	large := flag.Int("large", 64<<20, "large payload in bytes")
	reps := flag.Int("reps", 20, "repetitions for the small payload")
	largeReps := flag.Int("large-reps", 9, "repetitions for payloads above 8 MiB")
	frameReps := flag.Int("frame-reps", 100, "repetitions of the frame-layout ping-pong (0: skip it)")
	flag.Parse()
	comm, l, w, finalize, err := rawmpi.World()
	if err != nil {
		log.Fatal(err)
	}
	defer finalize()
	lib, world = l, w
	rank, _ := comm.Rank()
	size, _ := comm.Size()
	if size < 2 {
		log.Fatal("collectives needs at least 2 ranks")
	}
	if rank == 0 {
		ver, _ := lib.LibraryVersion()
		ver, _, _ = strings.Cut(ver, "\n")
		fmt.Printf("data-collective benchmark: %d ranks, backend %s (%s: %s), interleaved repetitions, median; bandwidth = payload bytes delivered / time\n",
			size, hataori.Backend(), os.Getenv(mpiabi.EnvVar), ver)
	}
	for _, n := range []int{*small, *large} {
		r := *reps
		if n > 8<<20 {
			r = *largeReps
		}
		runSize(comm, rank, size, n, r)
	}
	if *frameReps > 0 {
		framing(rank, *frameReps)
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func f64Bytes(v []float64) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}

func bcast(b []byte) { must(lib.Bcast(ptr(b), len(b), lib.Byte, 0, world)) }
func send(b []byte, dest, tag int) {
	must(lib.Send(ptr(b), len(b), lib.Byte, dest, tag, world))
}
func recv(b []byte, src, tag int) { must(lib.Recv(ptr(b), len(b), lib.Byte, src, tag, world, nil)) }

// op is one measured operation of a payload size.
type op struct {
	name string
	run  func()
	d    []time.Duration
}

// interleave runs every op once per repetition, each between barriers, in
// an order shuffled per repetition (the same on every rank: a fixed seed),
// after one warm-up repetition, and returns each op's median. Shuffling,
// rather than rotating one order, also varies which op precedes which; and
// before each op debug.FreeOSMemory returns the heap's free memory to the
// OS, so that every op's allocations start from the same state.
func interleave(reps int, ops []*op) map[string]time.Duration {
	rng := rand.New(rand.NewPCG(12, 3))
	order := make([]int, len(ops))
	for i := range order {
		order[i] = i
	}
	for rep := 0; rep <= reps; rep++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			o := ops[k]
			// The same heap state before every op: no freed span left for
			// its allocations to reuse (which would make an op cheaper
			// after one that freed a large buffer), every one fresh from
			// the OS.
			debug.FreeOSMemory()
			must(lib.Barrier(world))
			t0 := time.Now()
			o.run()
			must(lib.Barrier(world))
			if rep > 0 {
				o.d = append(o.d, time.Since(t0))
			}
		}
	}
	out := map[string]time.Duration{}
	for _, o := range ops {
		out[o.name] = stats.Median(o.d)
	}
	return out
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
	ops := []*op{
		{name: "bcast", run: func() { bcast(raw) }},
		{name: "bcast-fresh", run: func() {
			buf := raw
			if rank != 0 {
				buf = make([]byte, n)
			}
			bcast(buf)
		}},
		{name: "bcast-fresh-f64", run: func() {
			buf := raw
			if rank != 0 {
				buf = f64Bytes(make([]float64, n/8))
			}
			bcast(buf)
		}},
		{name: "fanout", run: func() {
			if rank == 0 {
				for d := 1; d < size; d++ {
					send(raw, d, 9)
				}
			} else {
				recv(raw, 0, 9)
			}
		}},
		{name: "Broadcast-f64", run: func() {
			m := hataori.None[[]float64]()
			if rank == 0 {
				m = hataori.Some(f64)
			}
			v, err := hataori.Broadcast(ctx, comm, 0, m)
			must(err)
			if len(v) != len(f64) {
				log.Fatalf("Broadcast: %d elements, want %d", len(v), len(f64))
			}
		}},
		{name: "Broadcast-bytes", run: func() {
			m := hataori.None[[]byte]()
			if rank == 0 {
				m = hataori.Some(bytesVal)
			}
			_, err := hataori.Broadcast(ctx, comm, 0, m)
			must(err)
		}},
		{name: "gather", run: func() {
			if rank == 0 {
				for s := 1; s < size; s++ {
					recv(raw, s, 10)
				}
			} else {
				send(raw, 0, 10)
			}
		}},
		{name: "gather-fresh", run: func() {
			if rank == 0 {
				kept := make([][]byte, size)
				for s := 1; s < size; s++ {
					kept[s] = make([]byte, n)
					recv(kept[s], s, 10)
				}
			} else {
				send(raw, 0, 10)
			}
		}},
		{name: "gather-fresh-f64", run: func() {
			if rank == 0 {
				kept := make([][]float64, size)
				for s := 1; s < size; s++ {
					kept[s] = make([]float64, n/8)
					recv(f64Bytes(kept[s]), s, 10)
				}
			} else {
				send(raw, 0, 10)
			}
		}},
		{name: "Gather-f64", run: func() {
			_, err := hataori.Gather(ctx, comm, 0, f64)
			must(err)
		}},
		{name: "Gather-bytes", run: func() {
			_, err := hataori.Gather(ctx, comm, 0, bytesVal)
			must(err)
		}},
	}
	m := interleave(reps, ops)
	if rank != 0 {
		return
	}
	label := fmt.Sprintf("%d MiB", n>>20)
	if n < 1<<20 {
		label = fmt.Sprintf("%d B", n)
	}
	fmt.Printf("\n%s payload, %d ranks, %d interleaved repetitions (median)\n", label, size, reps)
	fmt.Printf("  %-32s %10s %10s  %s\n", "operation", "ms", "MB/s", "ratio to raw")
	row := func(name, key string, delivered int, base string) {
		d := m[key]
		fmt.Printf("  %-32s %10.3f %10.0f  %.2fx\n", name, float64(d.Microseconds())/1e3, mbps(delivered, d), float64(d)/float64(m[base]))
	}
	row("raw MPI_Bcast", "bcast", n, "bcast")
	row("raw MPI_Bcast, fresh []byte", "bcast-fresh", n, "bcast")
	row("raw MPI_Bcast, fresh []float64", "bcast-fresh-f64", n, "bcast")
	row("raw Send fan-out (p2p bcast)", "fanout", n, "bcast")
	row("Broadcast []float64", "Broadcast-f64", n, "bcast")
	row("Broadcast []byte", "Broadcast-bytes", n, "bcast")
	g := n * (size - 1)
	row("raw Send/Recv gather", "gather", g, "gather")
	row("raw Send/Recv, fresh []byte", "gather-fresh", g, "gather")
	row("raw Send/Recv, fresh []float64", "gather-fresh-f64", g, "gather")
	row("Gather []float64", "Gather-f64", g, "gather")
	row("Gather []byte", "Gather-bytes", g, "gather")
	aim := ""
	if n >= 64<<20 {
		aim = " (aim <= 1.10)"
	}
	// The summary line scripts/bench-collectives.sh collects.
	fmt.Printf("  collectives %s %d ranks: Broadcast []float64 / raw MPI_Bcast into fresh []float64 %.2fx%s (into one reused buffer %.2fx); Gather []float64 / raw Send/Recv into fresh []float64 %.2fx%s (reused %.2fx)\n",
		label, size, float64(m["Broadcast-f64"])/float64(m["bcast-fresh-f64"]), aim, float64(m["Broadcast-f64"])/float64(m["bcast"]),
		float64(m["Gather-f64"])/float64(m["gather-fresh-f64"]), aim, float64(m["Gather-f64"])/float64(m["gather"]))
	fmt.Printf("  (ratios in the table are times against the first raw row of each block; \"fresh\" allocates each receive buffer, of the type the call returns, as a call returning new values must)\n")
}

// framing compares one message of header+payload with two messages
// (header, then payload) between ranks 0 and 1, as a ping-pong.
func framing(rank, reps int) {
	const hdr = 24
	if rank == 0 {
		fmt.Printf("\nframe layout, ping-pong between ranks 0 and 1, %d interleaved repetitions (round trip, median)\n", reps)
	}
	var st mpiabi.Status
	for _, n := range []int{64, 1 << 20} {
		one := make([]byte, hdr+n)
		h := make([]byte, hdr)
		p := make([]byte, n)
		peer := 1 - rank
		ops := []*op{
			{name: "one", run: func() {
				switch rank {
				case 0:
					send(one, peer, 3)
					recv(one, peer, 3)
				case 1:
					must(lib.Probe(peer, 3, world, &st))
					c, err := lib.GetCount(&st, lib.Byte)
					must(err)
					must(lib.Recv(ptr(one), c, lib.Byte, peer, 3, world, &st))
					send(one, peer, 3)
				}
			}},
			{name: "two", run: func() {
				switch rank {
				case 0:
					send(h, peer, 3)
					send(p, peer, 4)
					recv(h, peer, 3)
					recv(p, peer, 4)
				case 1:
					recv(h, peer, 3)
					recv(p, peer, 4)
					send(h, peer, 3)
					send(p, peer, 4)
				}
			}},
		}
		// Ranks beyond 1 only join the barriers.
		m := interleave(reps, ops)
		if rank == 0 {
			fmt.Printf("  payload %8d B: one message (probe+recv) %8.1f µs, two messages %8.1f µs, two/one %.2fx\n",
				n, float64(m["one"].Nanoseconds())/1e3, float64(m["two"].Nanoseconds())/1e3, float64(m["two"])/float64(m["one"]))
		}
	}
}
