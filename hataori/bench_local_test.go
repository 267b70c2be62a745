package hataori

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// handOuter is the baseline MapIn Outer is measured against: the loop a Go
// programmer writes by hand, with one goroutine per worker taking the next
// index from an atomic counter, input-order results and the lowest failing
// index.
func handOuter[T, U any](workers int, items []T, f func(T) (U, error)) ([]U, error) {
	out := make([]U, len(items))
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	errIndex, firstErr := -1, error(nil)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				u, err := f(items[i])
				if err != nil {
					mu.Lock()
					if errIndex < 0 || i < errIndex {
						errIndex, firstErr = i, err
					}
					mu.Unlock()
					continue
				}
				out[i] = u
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, newMapError(errIndex, firstErr)
	}
	return out, nil
}

func trivial(v int) (int, error) { return v + 1, nil }

// spinIters is the loop count that makes spin take about 50 µs here.
var (
	spinOnce  sync.Once
	spinIters int
	spinSink  float64 // keeps the calibration loop from being optimised away
)

func spinN(v, n int) float64 {
	x := float64(v)
	for i := range n {
		x = math.Sqrt(x*x + float64(i))
	}
	return x
}

func spin50us(v int) (float64, error) { return spinN(v, spinIters), nil }

// calibrateSpin times a short spin many times and keeps the fastest run,
// which other processes on the machine cannot make look faster.
func calibrateSpin() {
	spinOnce.Do(func() {
		const n = 1 << 12
		best := time.Duration(math.MaxInt64)
		for range 200 {
			start := time.Now()
			spinSink += spinN(1, n)
			best = min(best, time.Since(start))
		}
		spinIters = int(float64(n) * float64(50*time.Microsecond) / float64(best))
	})
}

// BenchmarkLocalOuter runs, in each iteration, MapIn Outer on the default
// local domain and the hand-written loop over as many goroutines (and, for
// the CPU-bound case, serial Map), timing each, and reports per-item times,
// the ratio MapIn/hand (the overhead aim is <= 1.2) and the speed-up of
// MapIn over serial Map (the aim on 2 cores is >= 1.8).
func BenchmarkLocalOuter(b *testing.B) {
	d, err := NewLocalDomain()
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	b.Run("trivial", func(b *testing.B) {
		benchOuter(b, d, 20000, trivial, false)
	})
	b.Run("cpu50us", func(b *testing.B) {
		calibrateSpin()
		benchOuter(b, d, 200, spin50us, true)
	})
}

func benchOuter[U any](b *testing.B, d *Domain, n int, f func(int) (U, error), serial bool) {
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	ctx := context.Background()
	var tMapIn, tHand, tSerial []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := MapIn(ctx, d, Outer, items, f); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := handOuter(d.Workers(), items, f); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if serial {
			if _, err := Map(ctx, items, f); err != nil {
				b.Fatal(err)
			}
		}
		t3 := time.Now()
		tMapIn = append(tMapIn, t1.Sub(t0))
		tHand = append(tHand, t2.Sub(t1))
		tSerial = append(tSerial, t3.Sub(t2))
	}
	// Medians of the interleaved rounds: robust against other processes
	// taking the CPUs for a while.
	mMapIn, mHand, mSerial := median(tMapIn), median(tHand), median(tSerial)
	perItem := func(t time.Duration) float64 { return float64(t.Nanoseconds()) / float64(n) }
	b.ReportMetric(perItem(mMapIn), "mapin-ns/item")
	b.ReportMetric(perItem(mHand), "hand-ns/item")
	b.ReportMetric(float64(mMapIn)/float64(mHand), "mapin/hand")
	b.ReportMetric(float64(d.Workers()), "workers")
	if serial {
		b.ReportMetric(perItem(mSerial), "serial-ns/item")
		b.ReportMetric(float64(mSerial)/float64(mMapIn), "speedup")
	}
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkLocalCall measures the fixed cost of one call with as many
// trivial items as workers: waking the domain's locked worker threads
// (MapIn) against starting goroutines (hand-written loop).
func BenchmarkLocalCall(b *testing.B) {
	d, err := NewLocalDomain()
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	items := make([]int, d.Workers())
	b.Run("mapin", func(b *testing.B) {
		for b.Loop() {
			if _, err := MapIn(context.Background(), d, Outer, items, trivial); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			if _, err := handOuter(d.Workers(), items, trivial); err != nil {
				b.Fatal(err)
			}
		}
	})
}
