//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

const mib = 1 << 20

// slowStart delays every batch of the wrapped executor, so that the root
// takes few items and almost every result crosses ranks.
type slowStart struct {
	hataori.Executor
	delay time.Duration
}

func (s slowStart) Start(b hataori.Batch) {
	go func() {
		time.Sleep(s.delay)
		s.Executor.Start(b)
	}()
}

// payload compares Pmap's effective bandwidth for 1 MiB []float64 results
// with a raw MPI send of 1 MiB buffers from rank 1 to rank 0.
func payload(e *env) error {
	if e.size < 2 {
		return fmt.Errorf("needs at least 2 ranks")
	}
	const n = 64
	// Raw MPI: rank 1 sends n MiB-sized messages to rank 0.
	buf := make([]byte, mib)
	if err := e.world.Barrier(); err != nil {
		return err
	}
	start := time.Now()
	for range n {
		switch e.rank {
		case 0:
			if _, err := e.world.Recv(buf, 1, 6); err != nil {
				return err
			}
		case 1:
			if err := e.world.Send(buf, 0, 6); err != nil {
				return err
			}
		}
	}
	raw := time.Since(start)
	if err := e.world.Barrier(); err != nil {
		return err
	}

	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1, Placement: hataori.Declared})
	if err != nil {
		return err
	}
	defer d.Close()
	exec := d.Executor(hataori.Sequential)
	if e.rank == 0 {
		exec = slowStart{exec, 100 * time.Millisecond}
	}
	var local atomic.Int64 // items the root computed itself (no transfer)
	if err := e.world.Barrier(); err != nil {
		return err
	}
	start = time.Now()
	out, err := hataori.PmapOn(ctx, e.world, exec, hataori.Options{}, e.items(n), func(_, x int) ([]float64, error) {
		if e.rank == 0 {
			local.Add(1)
		}
		v := make([]float64, mib/8)
		v[0] = float64(x)
		return v, nil
	})
	if err != nil {
		return err
	}
	el := time.Since(start)
	if e.rank == 0 && (len(out) != n || out[n-1][0] != n-1) {
		return fmt.Errorf("wrong results")
	}
	// The codec alone, in process: encode and decode one 1 MiB result.
	const reps = 20
	v := make([]float64, mib/8)
	t0 := time.Now()
	for range reps {
		b, err := wire.EncodeValue(nil, v)
		if err != nil {
			return err
		}
		if _, err := wire.DecodeValue[[]float64](b); err != nil {
			return err
		}
	}
	codecBW := float64(reps*mib) / time.Since(t0).Seconds()
	crossed := n - local.Load()
	rawBW := float64(n*mib) / raw.Seconds()
	pmapBW := float64(crossed*mib) / el.Seconds()
	e.printf("payload (%d results of 1 MiB []float64, %d ranks; the root's own batches start late, so results cross ranks): %d crossed, %d computed on the root\n",
		n, e.size, crossed, local.Load())
	e.printf("  raw MPI send %.0f MB/s; Pmap effective %.0f MB/s (crossing bytes / call time, callback allocation included) = %.2f of raw\n",
		rawBW/1e6, pmapBW/1e6, pmapBW/rawBW)
	e.printf("  codec alone (encode + decode of one 1 MiB result, in process): %.0f MB/s\n", codecBW/1e6)
	return nil
}
