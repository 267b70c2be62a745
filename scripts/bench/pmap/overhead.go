//go:build mpirt || mpicgo

package main

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
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
	dom    *hataori.Domain
	mode   hataori.LocalMode
	batch  int
	per    []float64 // µs/item per round
	rtts   []float64 // per round: µs/item ÷ that round's round trip
	remote []float64 // per round: µs/item of the remote slots, when measured
	items  [][]int64 // the last round's items per rank and slot
	slots  int
}

// overhead runs trivial items in the two user configurations (MPI-only:
// nil domain; hybrid: NewLocalDomain on every rank, Mode Outer) at batch 1
// and 64, rounds times, interleaved, each round next to an MPI ping-pong
// round trip measured in the same round.
func overhead(e *env) error {
	if e.size < 2 {
		return fmt.Errorf("needs at least 2 ranks")
	}
	const n = 20000
	d, err := e.openDomain(fmt.Sprintf("overhead (%d trivial items, %d ranks, %d rounds)", n, e.size, rounds))
	if err != nil {
		return err
	}
	defer d.Close()
	variants := []*overheadVariant{
		{name: "mpi-only", batch: 1}, {name: "mpi-only", batch: 64},
		{name: "hybrid", dom: d, mode: hataori.Outer, batch: 1}, {name: "hybrid", dom: d, mode: hataori.Outer, batch: 64},
	}
	var rtts []float64
	for round := 0; round <= rounds; round++ { // round 0 is a warm-up
		rtt, err := pingPong(e, 2000)
		if err != nil {
			return err
		}
		if round > 0 {
			rtts = append(rtts, us(rtt))
		}
		for _, v := range variants {
			if err := e.world.Barrier(); err != nil {
				return err
			}
			var first, last, calls atomic.Int64
			var g gomaxprocsSeen
			var st hataori.CallStats
			start := time.Now()
			out, err := hataori.Pmap(ctx, e.world, v.dom, hataori.Options{BatchSize: v.batch, Mode: v.mode, Stats: &st}, e.items(n),
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
			remote, err := remotePerItem(e, first.Load(), last.Load(), calls.Load())
			if err != nil {
				return err
			}
			if round == 0 {
				if v.batch == 1 {
					info, err := e.rankInfo(g.v.Load())
					if err != nil {
						return err
					}
					e.printf("  %-8s during the call: %s\n", v.name, strings.Join(info, "; "))
				}
				continue
			}
			if e.rank != 0 {
				continue
			}
			per := us(el) / n
			v.per = append(v.per, per)
			v.rtts = append(v.rtts, per/us(rtt))
			if remote > 0 {
				v.remote = append(v.remote, us(remote))
			}
			v.items, v.slots = st.Items, totalSlots(st)
		}
	}
	if e.rank != 0 {
		return nil
	}
	e.printf("  MPI ping-pong round trip (ranks 0 and 1): median %.2f µs\n", median(rtts))
	for _, v := range variants {
		aim := ""
		if v.name == "hybrid" && v.batch == 1 {
			aim = " (aim <= 3 µs/item)"
		}
		rt := rankTotals(hataori.CallStats{Items: v.items})
		e.printf("  overhead %-8s batch %2d, %d slots: median %6.2f µs/item%s (min %.2f, max %.2f) = %5.2f round trips/item; %.0f%% on the root; items (last round) %s\n",
			v.name, v.batch, v.slots, median(v.per), aim, slices.Min(v.per), slices.Max(v.per), median(v.rtts),
			100*float64(rt[0])/n, slotsOf(v.items))
		if len(v.remote) > 0 {
			e.printf("  %-8s          a remote rank spends median %.2f µs/item (first to last callback over its items, all its slots, protocol included), over %d rounds\n",
				"", median(v.remote), len(v.remote))
		}
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// remotePerItem returns, on rank 0, the mean time per item of the remote
// lanes (the span between their first and last callback over the calls
// made, so READY/TASK/RESULT traffic is included), averaged over remote
// ranks that ran at least two items; 0 when none did.
func remotePerItem(e *env, first, last, calls int64) (time.Duration, error) {
	var buf [16]byte
	if e.rank != 0 {
		binary.LittleEndian.PutUint64(buf[:], uint64(last-first))
		binary.LittleEndian.PutUint64(buf[8:], uint64(calls))
		return 0, e.world.Send(buf[:], 0, 8)
	}
	var sum time.Duration
	k := 0
	for r := 1; r < e.size; r++ {
		if _, err := e.world.Recv(buf[:], r, 8); err != nil {
			return 0, err
		}
		span, c := int64(binary.LittleEndian.Uint64(buf[:])), int64(binary.LittleEndian.Uint64(buf[8:]))
		if c >= 2 {
			sum += time.Duration(span / (c - 1))
			k++
		}
	}
	if k == 0 {
		return 0, nil
	}
	return sum / time.Duration(k), nil
}
