//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/scripts/bench/internal/gather"
)

// pingPong returns the mean round trip of an 8-byte message between ranks
// 0 and 1 (the other ranks wait at the barrier).
func pingPong(e *env, iters int) (time.Duration, error) {
	buf := make([]byte, 8)
	if err := e.world.Barrier(); err != nil {
		return 0, err
	}
	start := time.Now()
	for range iters {
		switch e.rank {
		case 0:
			if err := e.world.Send(buf, 1, 5); err != nil {
				return 0, err
			}
			if _, err := e.world.Recv(buf, 1, 5); err != nil {
				return 0, err
			}
		case 1:
			if _, err := e.world.Recv(buf, 0, 5); err != nil {
				return 0, err
			}
			if err := e.world.Send(buf, 0, 5); err != nil {
				return 0, err
			}
		}
	}
	rtt := time.Since(start) / time.Duration(iters)
	return rtt, e.world.Barrier()
}

// overheadVariant is one configuration of the overhead case.
type overheadVariant struct {
	name   string
	hybrid bool // NewLocalDomain on every rank (else nil: MPI-only)
	batch  int  // Options.BatchSize (0: automatic, the zero Options)
	aim    float64
	per    []float64 // µs/item per round
	rtts   []float64 // per round: µs/item ÷ that round's round trip
	remote []float64 // per round: µs/item of the remote slots, when measured
	last   hataori.CallStats
	slots  int
}

// overhead runs 20,000 trivial items in the two user configurations
// (MPI-only: nil domain; hybrid: NewLocalDomain on every rank, the zero
// Mode) at automatic sizes (the zero Options), batch 1 and batch 64.
func overhead(e *env) error {
	return trivialCase(e, "overhead", 20000, []*overheadVariant{
		{name: "mpi-only", batch: 0}, {name: "mpi-only", batch: 1}, {name: "mpi-only", batch: 64},
		{name: "hybrid", hybrid: true, batch: 0}, {name: "hybrid", hybrid: true, batch: 1, aim: 3}, {name: "hybrid", hybrid: true, batch: 64},
	})
}

// trivial runs 200,000 trivial items, the zero Options, hybrid (the
// figure: aim <= 0.1 µs/item) and MPI-only, and hybrid at batch 1 for
// comparison.
func trivial(e *env) error {
	return trivialCase(e, "trivial", 200000, []*overheadVariant{
		{name: "hybrid", hybrid: true, batch: 0, aim: 0.1}, {name: "mpi-only", batch: 0}, {name: "hybrid", hybrid: true, batch: 1},
	})
}

// trivialCase runs n trivial items (x+1) in the variants, rounds times,
// interleaved, each round next to an MPI ping-pong round trip measured in
// the same round and to a plain loop of the same callback on the root
// (into a fresh result slice, as Pmap's result table).
func trivialCase(e *env, name string, n int, variants []*overheadVariant) error {
	if e.size < 2 {
		return fmt.Errorf("needs at least 2 ranks")
	}
	d, err := e.openDomain(fmt.Sprintf("%s (%d trivial items, %d ranks, %d rounds; auto: the zero Options)", name, n, e.size, rounds))
	if err != nil {
		return err
	}
	defer d.Close()
	var rtts, loops []float64
	for round := 0; round <= rounds; round++ { // round 0 is a warm-up
		rtt, err := pingPong(e, 2000)
		if err != nil {
			return err
		}
		if round > 0 {
			rtts = append(rtts, us(rtt))
		}
		if e.rank == 0 {
			f := func(x int) (int, error) { return x + 1, nil }
			xs, _ := e.items(n).Get()
			t0 := time.Now()
			out := make([]int, n)
			for i, x := range xs {
				if out[i], err = f(x); err != nil {
					return err
				}
			}
			el := time.Since(t0)
			if out[n-1] != n {
				return fmt.Errorf("wrong loop results")
			}
			if round > 0 {
				loops = append(loops, us(el)/float64(n))
			}
		}
		for _, v := range variants {
			if err := e.world.Barrier(); err != nil {
				return err
			}
			var first, last, calls atomic.Int64
			var g gomaxprocsSeen
			var st hataori.CallStats
			start := time.Now()
			var dom *hataori.Domain
			if v.hybrid {
				dom = d
			}
			out, err := hataori.Pmap(ctx, e.world, dom, hataori.Options{BatchSize: v.batch, Stats: &st}, e.items(n),
				func(x int) (int, error) {
					if e.rank != 0 {
						now := time.Since(start).Nanoseconds()
						first.CompareAndSwap(0, now)
						last.Store(now)
						calls.Add(1)
					}
					g.note()
					return x + 1, nil
				})
			if err != nil {
				return err
			}
			el := time.Since(start)
			if e.rank == 0 && (len(out) != n || out[n-1] != n) {
				return fmt.Errorf("wrong results")
			}
			remote, err := gather.RemotePerItem(e.world, e.rank, e.size, first.Load(), last.Load(), calls.Load())
			if err != nil {
				return err
			}
			if round == 0 {
				info, err := e.rankInfo(g.v.Load())
				if err != nil {
					return err
				}
				e.printf("  %-8s %-4s during the call: %s\n", v.name, batchName(v.batch), strings.Join(info, "; "))
				continue
			}
			if e.rank != 0 {
				continue
			}
			per := us(el) / float64(n)
			v.per = append(v.per, per)
			v.rtts = append(v.rtts, per/us(rtt))
			if remote > 0 {
				v.remote = append(v.remote, us(remote))
			}
			v.last, v.slots = st, totalSlots(st)
			e.printf("  round %d %-8s %-4s %.3f µs/item; items per rank %v, per slot %s; batch sizes per rank %s, per slot %s; slots busy/idle %s\n",
				round, v.name, batchName(v.batch), per, rankTotals(st), slotsOf(st.Items), rankSizes(st.Sizes), sizesOf(st.Sizes), busyIdleOf(st))
		}
	}
	if e.rank != 0 {
		return nil
	}
	e.printf("  MPI ping-pong round trip (ranks 0 and 1): median %.2f µs; the plain loop of the callback on the root: median %.4f µs/item\n", median(rtts), median(loops))
	for _, v := range variants {
		aim := ""
		if v.aim > 0 {
			aim = fmt.Sprintf(" (aim <= %g µs/item: %s)", v.aim, met(median(v.per) <= v.aim))
		}
		rt := rankTotals(v.last)
		e.printf("  %s %-8s %-4s %d slots: median %6.3f µs/item%s (min %.3f, max %.3f) = %5.3f round trips/item, %.1f× the plain loop; %.0f%% on the root; items per rank (last round) %v, per slot %s; batch sizes per rank min/median/max×batches (last round) %s\n",
			name, v.name, batchName(v.batch), v.slots, median(v.per), aim, slices.Min(v.per), slices.Max(v.per), median(v.rtts),
			median(v.per)/median(loops), 100*float64(rt[0])/float64(n), rt, slotsOf(v.last.Items), rankSizes(v.last.Sizes))
		if len(v.remote) > 0 {
			e.printf("  %-8s          a remote rank spends median %.2f µs/item (first to last callback over its items, all its slots, protocol included), over %d rounds\n",
				"", median(v.remote), len(v.remote))
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
