//go:build mpirt || mpicgo

package main

import (
	"encoding/binary"
	"fmt"
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

func overhead(e *env) error {
	if e.size < 2 {
		return fmt.Errorf("needs at least 2 ranks")
	}
	const n = 20000
	rtt, err := pingPong(e, 5000)
	if err != nil {
		return err
	}
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1, Placement: hataori.Declared})
	if err != nil {
		return err
	}
	defer d.Close()
	e.printf("overhead (%d trivial items, %d ranks): MPI ping-pong round trip %.2f µs\n", n, e.size, us(rtt))
	for _, c := range []struct {
		name  string
		d     *hataori.Domain
		batch int
	}{{"mpi-only", nil, 1}, {"mpi-only", nil, 64}, {"hybrid", d, 1}, {"hybrid", d, 64}} {
		if err := e.world.Barrier(); err != nil {
			return err
		}
		var local atomic.Int64 // items computed on the root (no transfer)
		var first, last atomic.Int64
		var calls atomic.Int64
		start := time.Now()
		out, err := hataori.Pmap(ctx, e.world, c.d, hataori.Options{BatchSize: c.batch}, e.items(n),
			func(x int) (int, error) {
				if e.rank == 0 {
					local.Add(1)
				} else {
					now := time.Since(start).Nanoseconds()
					first.CompareAndSwap(0, now)
					last.Store(now)
					calls.Add(1)
				}
				return x + 1, nil
			})
		if err != nil {
			return err
		}
		el := time.Since(start)
		if e.rank == 0 && (len(out) != n || out[n-1] != n) {
			return fmt.Errorf("wrong results")
		}
		per := el / n
		remote, err := remotePerItem(e, first.Load(), last.Load(), calls.Load())
		if err != nil {
			return err
		}
		e.printf("  %-8s batch %2d: %9.0f items/s  %6.2f µs/item  = %5.2f round trips/item  (%2.0f%% of the items ran on the root)\n",
			c.name, c.batch, float64(n)/el.Seconds(), us(per), float64(per)/float64(rtt), 100*float64(local.Load())/n)
		if remote > 0 {
			e.printf("  %-8s batch %2d: a remote lane spends %6.2f µs/item = %5.2f round trips/item (protocol included)\n",
				"", c.batch, us(remote), float64(remote)/float64(rtt))
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
