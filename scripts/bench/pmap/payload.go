//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/scripts/bench/internal/gather"
	"github.com/hataori/hataori-go/scripts/bench/internal/stats"
)

const (
	mib          = 1 << 20
	payloadN     = 64 // results per measured call
	payloadRound = 7  // measured rounds; each pairs a raw run with a Pmap call
)

// result is the work every measured path does to produce one result: a
// fresh 1 MiB []float64, every element written.
func result(x int) []float64 {
	v := make([]float64, mib/8)
	for i := range v {
		v[i] = float64(x) + float64(i)
	}
	return v
}

func bytesOf(v []float64) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 8*len(v)) }

func checkResult(v []float64, x int) error {
	if len(v) != mib/8 || v[0] != float64(x) || v[len(v)-1] != float64(x)+float64(len(v)-1) {
		return fmt.Errorf("wrong result for item %d", x)
	}
	return nil
}

// payload measures Pmap's result path for 1 MiB []float64 results on the
// remote ranks against raw MPI doing the same work in the same run:
//
//   - ceiling: rank 1 sends one 1 MiB buffer over and over, rank 0
//     receives into one buffer (no allocation: the transport alone);
//   - raw: rank 1 computes each result (allocates a fresh 1 MiB []float64
//     and writes every element) and sends it; rank 0 receives each into a
//     fresh []float64 and keeps them all, as Pmap's result table does;
//   - Pmap: the same results, computed by the callback, the zero Options, in
//     the two user configurations: MPI-only (nil domain on every rank: one
//     slot per rank, on a helper goroutine) and hybrid (NewLocalDomain on
//     every rank, the zero Mode: one slot per worker). The root's own slots
//     hold their first item until every other item has finished (an
//     OnProgress hook tells them), so that results cross ranks and the
//     call ends right after the last remote result. With several remote
//     slots the remote rank's time per result is its throughput (results
//     overlap).
//
// Every rank returns its free heap memory to the OS (debug.FreeOSMemory)
// before each measured run, raw or Pmap, so that "fresh" means fresh for
// both: with a collection alone, a run allocates into the pages the
// previous run freed, warm or already returned by the scavenger depending
// on its timing, and the raw loop's time per result varied 4x between
// launches with it.
//
// For each Pmap variant it prints the effective bandwidth (bytes of the
// results that crossed ranks / whole call time, protocol, encode, transfer
// and decode included) and the remote rank's steady-state time per result
// (span from its first to its last callback start / (calls-1), measured on
// the remote rank), each as a ratio of the raw figure of the same round.
func payload(e *env) error {
	if e.size < 2 {
		return fmt.Errorf("needs at least 2 ranks")
	}
	ceiling, err := rawCeiling(e, payloadN)
	if err != nil {
		return err
	}
	d, err := e.openDomain(fmt.Sprintf("payload (%d results of 1 MiB []float64 per call, %d ranks, batch 1, %d rounds)", payloadN, e.size, payloadRound))
	if err != nil {
		return err
	}
	defer d.Close()
	e.printf("  transport ceiling (one buffer re-sent and re-received, no allocation): %.0f µs/MiB = %.0f MB/s\n",
		us(ceiling), mbps(ceiling))
	variants := []struct {
		name  string
		dom   *hataori.Domain // nil: MPI-only on every rank
		items [][]int64       // the last round's items per rank and slot
		eff   []float64       // per-round ratios to raw
		lane  []float64
	}{
		{name: "MPI-only", dom: nil},
		{name: "hybrid", dom: d},
	}
	// Warm-up: one raw run and one call of each variant.
	if _, err := rawFresh(e, payloadN); err != nil {
		return err
	}
	for i := range variants {
		if _, _, err := pmapPayload(e, variants[i].dom); err != nil {
			return err
		}
	}
	for round := 1; round <= payloadRound; round++ {
		rawPer, err := rawFresh(e, payloadN)
		if err != nil {
			return err
		}
		e.printf("  round %d: raw %4.0f µs/result (%5.0f MB/s)\n", round, us(rawPer), mbps(rawPer))
		for i := range variants {
			v := &variants[i]
			m, lane, err := pmapPayload(e, v.dom)
			if err != nil {
				return err
			}
			eff := m.elapsed / time.Duration(max(m.crossed, 1))
			v.eff = append(v.eff, float64(rawPer)/float64(eff))
			laneRatio := math.NaN()
			if lane > 0 {
				laneRatio = float64(rawPer) / float64(lane)
				v.lane = append(v.lane, laneRatio)
			}
			v.items = m.items
			e.printf("    Pmap, %-9s %5.1f ms call, %2d of %d crossed: %5.0f µs/crossed result (%5.0f MB/s) = %.2f of raw; remote rank %5.0f µs/result = %.2f of raw; items %s\n",
				v.name+":", float64(m.elapsed)/1e6, m.crossed, payloadN, us(eff), mbps(eff),
				float64(rawPer)/float64(eff), us(lane), laneRatio, slotsOf(m.items))
		}
	}
	for _, v := range variants {
		e.printf("  payload %-8s median over %d rounds: effective = %.2f of raw, remote rank = %.2f of raw (per result, same work); items (last round) %s\n",
			v.name, payloadRound, median(v.eff), median(v.lane), slotsOf(v.items))
	}

	// The codec alone (encode and aliasing decode in process) needs the
	// private wire package; it is measured by
	// go test -bench BulkFloat64 ./hataori/internal/wire.
	return nil
}

// rawCeiling is the time per 1 MiB message from rank 1 to rank 0 when both
// reuse one buffer.
func rawCeiling(e *env, n int) (time.Duration, error) {
	buf := make([]byte, mib)
	if err := e.world.Barrier(); err != nil {
		return 0, err
	}
	start := time.Now()
	for range n {
		switch e.rank {
		case 0:
			if _, err := e.world.Recv(buf, 1, 6); err != nil {
				return 0, err
			}
		case 1:
			if err := e.world.Send(buf, 0, 6); err != nil {
				return 0, err
			}
		}
	}
	el := time.Since(start)
	return el / time.Duration(n), e.world.Barrier()
}

// freshHeap returns the free heap memory to the OS before a measured run
// (see payload), so that no page a previous run freed is reused warm.
func freshHeap() { debug.FreeOSMemory() }

// rawFresh is the time per result when rank 1 computes each result and
// sends it and rank 0 receives each into a fresh slice and keeps them.
func rawFresh(e *env, n int) (time.Duration, error) {
	freshHeap()
	kept := make([][]float64, n)
	if err := e.world.Barrier(); err != nil {
		return 0, err
	}
	start := time.Now()
	for x := range n {
		switch e.rank {
		case 0:
			v := make([]float64, mib/8)
			if _, err := e.world.Recv(bytesOf(v), 1, 7); err != nil {
				return 0, err
			}
			kept[x] = v
		case 1:
			if err := e.world.Send(bytesOf(result(x)), 0, 7); err != nil {
				return 0, err
			}
		}
	}
	el := time.Since(start)
	if e.rank == 0 {
		for x, v := range kept {
			if err := checkResult(v, x); err != nil {
				return 0, err
			}
		}
	}
	return el / time.Duration(n), e.world.Barrier()
}

// pmapRun is one measured Pmap call as seen by rank 0.
type pmapRun struct {
	elapsed time.Duration
	crossed int       // results computed on another rank
	items   [][]int64 // per rank and slot (Options.Stats)
}

// pmapPayload runs one Pmap call on d (nil: MPI-only), whose root slots
// hold their item until every other item has finished, and returns the
// call's figures with the remote ranks' mean steady-state time per result
// (0 if no remote rank ran two items).
func pmapPayload(e *env, d *hataori.Domain) (pmapRun, time.Duration, error) {
	freshHeap()
	var local atomic.Int64 // items the root computed itself
	var first, last, calls atomic.Int64
	// The root's own slots hold their item until the OnProgress hook (on
	// the root's coordinator, called whenever the count of finished items
	// changed: ProgressEvery 1 ns) reports every item finished but the
	// held ones, so that the root computes as few items as possible, almost
	// every result crosses ranks, and the call ends with the last remote
	// result. (A hold timed by an estimate of the remote work either left
	// the call idle past that end, 5-13% of the call here, or let the root
	// take items.) The hook's cost stays in the Pmap figures.
	var held, done atomic.Int64
	allDone := make(chan struct{})
	var closeOnce sync.Once
	check := func() {
		if done.Load()+held.Load() >= payloadN {
			closeOnce.Do(func() { close(allDone) })
		}
	}
	if err := e.world.Barrier(); err != nil {
		return pmapRun{}, 0, err
	}
	start := time.Now()
	opts := hataori.Options{}
	if e.rank == 0 {
		opts.ProgressEvery = time.Nanosecond
		opts.OnProgress = func(p hataori.Progress) { done.Store(int64(p.Done)); check() }
	}
	var st hataori.CallStats
	opts.Stats = &st
	out, err := hataori.Pmap(ctx, e.world, d, opts, e.items(payloadN), func(x int) ([]float64, error) {
		if e.rank == 0 {
			held.Add(1)
			check()
			select {
			case <-allDone:
			case <-time.After(10 * time.Second): // a lost hook must not hang the benchmark
			}
			local.Add(1)
		} else {
			now := time.Since(start).Nanoseconds()
			first.CompareAndSwap(0, now)
			last.Store(now)
			calls.Add(1)
		}
		return result(x), nil
	})
	if err != nil {
		return pmapRun{}, 0, err
	}
	el := time.Since(start)
	if e.rank == 0 {
		if len(out) != payloadN {
			return pmapRun{}, 0, fmt.Errorf("%d results, want %d", len(out), payloadN)
		}
		for x, v := range out {
			if err := checkResult(v, x); err != nil {
				return pmapRun{}, 0, err
			}
		}
	}
	lane, err := gather.RemotePerItem(e.world, e.rank, e.size, first.Load(), last.Load(), calls.Load())
	if err != nil {
		return pmapRun{}, 0, err
	}
	return pmapRun{elapsed: el, crossed: payloadN - int(local.Load()), items: st.Items}, lane, e.world.Barrier()
}

func mbps(perMiB time.Duration) float64 { return mib / perMiB.Seconds() / 1e6 }

// median is stats.Median, NaN for no values (printed as such).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Median(xs)
}
