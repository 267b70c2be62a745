//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/scripts/bench/internal/gather"
)

const (
	remoteN    = 64                     // items per call
	remoteCost = 300 * time.Microsecond // callback time per item, result filling included
)

// remote measures how fast 1 MiB []float64 results cross ranks when the
// items cost enough (~300 µs each: the callback fills a fresh 1 MiB result
// and then spins until 300 µs have passed) that the other rank takes part
// on its own: 64 items, batch 1, 2 ranks, MPI-only and hybrid, nothing held
// back. On the remote rank, the span from its first to its last callback
// start over the calls in between is its time per result; minus the mean
// callback time it is the result path (the RESULT frame of 1 MiB going to
// the root and the next TASK coming back). 1 MiB / path is the remote
// results' bandwidth, which scripts/bench-pmap.sh (case remote) divides by
// the 1 MiB bandwidth of scripts/bench/pingpong.c measured in the same
// script run, launch by launch (aim >= 0.5). Each configuration makes
// rounds calls after one warm-up; the medians are printed, with the items
// each rank ran (Options.Stats). A third configuration, mpi-only/sleep,
// sleeps out the 300 µs after filling the result instead of spinning (a
// short Go sleep lasts longer, about a millisecond here; the callback time
// is subtracted either way): it leaves the root's core to its coordinator,
// and so shows how much of the result path is the coordinator waiting for
// a core that a computing slot holds.
func remote(e *env) error {
	if e.size != 2 {
		return fmt.Errorf("needs exactly 2 ranks")
	}
	d, err := e.openDomain(fmt.Sprintf("remote (%d items of ~%v returning 1 MiB []float64, %d ranks, batch 1, %d rounds)", remoteN, remoteCost, e.size, rounds))
	if err != nil {
		return err
	}
	defer d.Close()
	variants := []struct {
		name  string
		dom   *hataori.Domain
		sleep bool      // the callback sleeps instead of spinning after filling its result
		path  []float64 // µs per result, per round
		lane  []float64
		cb    []float64
		wall  []float64
		items [][]int64
	}{
		{name: "mpi-only"},
		{name: "hybrid", dom: d},
		{name: "mpi-only/sleep", sleep: true},
	}
	for round := 0; round <= rounds; round++ { // round 0 is a warm-up
		for i := range variants {
			v := &variants[i]
			runtime.GC()
			var first, last, calls, cbSum atomic.Int64
			if err := e.world.Barrier(); err != nil {
				return err
			}
			start := time.Now()
			var st hataori.CallStats
			out, err := hataori.Pmap(ctx, e.world, v.dom, hataori.Options{Stats: &st}, e.items(remoteN), func(x int) ([]float64, error) {
				t0 := time.Now()
				r := result(x)
				if v.sleep {
					time.Sleep(time.Until(t0.Add(remoteCost)))
				}
				for time.Since(t0) < remoteCost {
				}
				if e.rank != 0 {
					s := t0.Sub(start).Nanoseconds()
					first.CompareAndSwap(0, s)
					last.Store(s)
					calls.Add(1)
					cbSum.Add(time.Since(t0).Nanoseconds())
				}
				return r, nil
			})
			if err != nil {
				return err
			}
			el := time.Since(start)
			if e.rank == 0 {
				for x, r := range out {
					if err := checkResult(r, x); err != nil {
						return err
					}
				}
			}
			// The remote rank's figures, to the root.
			c := max(calls.Load(), 1)
			lane, err := gather.RemotePerItem(e.world, e.rank, e.size, first.Load(), last.Load(), calls.Load())
			if err != nil {
				return err
			}
			cbMean, err := e.sendToRoot(uint64(cbSum.Load() / c))
			if err != nil {
				return err
			}
			if round == 0 || e.rank != 0 || lane <= 0 {
				continue
			}
			path := us(lane) - float64(cbMean)/1e3
			v.lane = append(v.lane, us(lane))
			v.cb = append(v.cb, float64(cbMean)/1e3)
			v.path = append(v.path, path)
			v.wall = append(v.wall, us(el))
			v.items = st.Items
		}
	}
	for _, v := range variants {
		if len(v.path) == 0 {
			e.printf("  remote %-14s: the remote rank ran fewer than 2 items in every round; items (last round) %s\n", v.name, slotsOf(v.items))
			continue
		}
		p := median(v.path)
		e.printf("  remote %-14s call %6.1f ms; remote rank %5.0f µs/result, callback %5.0f µs, result path %5.0f µs/MiB = %5.0f MB/s; items (last round) %s\n",
			v.name, median(v.wall)/1e3, median(v.lane), median(v.cb), p, mib/p, slotsOf(v.items))
		// The line scripts/bench-pmap.sh parses.
		e.printf("REMOTE config=%s path_us=%.1f mbps=%.1f items=%s\n", v.name, p, mib/p, itemsKV(v.items))
	}
	return nil
}

// sendToRoot returns, on rank 0, rank 1's v (0 on other ranks).
func (e *env) sendToRoot(v uint64) (uint64, error) {
	const tag = 11
	var buf [8]byte
	if e.rank == 1 {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		return 0, e.world.Send(buf[:], 0, tag)
	}
	if e.rank != 0 {
		return 0, nil
	}
	if _, err := e.world.Recv(buf[:], 1, tag); err != nil {
		return 0, err
	}
	var out uint64
	for i := range buf {
		out |= uint64(buf[i]) << (8 * i)
	}
	return out, nil
}

// itemsKV formats the items per rank as r0:N,r1:M (no spaces).
func itemsKV(t [][]int64) string {
	s := ""
	for r, n := range rankTotals(hataori.CallStats{Items: t}) {
		if r > 0 {
			s += ","
		}
		s += fmt.Sprintf("r%d:%d", r, n)
	}
	return s
}
