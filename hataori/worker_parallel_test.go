package hataori

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParallelInInner(t *testing.T) {
	d := newTestDomain(t, 3)
	out, err := MapIn(context.Background(), d, Inner, []int{10, 100, 0}, func(n int) (int, error) {
		hits := make([]atomic.Int32, n)
		var offWorker atomic.Int32
		if err := d.Parallel(n, func(i int) {
			hits[i].Add(1)
			if !onWorker() {
				offWorker.Add(1)
			}
		}); err != nil {
			return 0, err
		}
		for i := range hits {
			if hits[i].Load() != 1 {
				t.Errorf("index %d ran %d times", i, hits[i].Load())
			}
		}
		if k := offWorker.Load(); k != 0 {
			t.Errorf("%d bodies ran off the domain's workers", k)
		}
		return n, nil
	})
	if err != nil || !slices.Equal(out, []int{10, 100, 0}) {
		t.Fatalf("MapIn = %v, %v", out, err)
	}
}

func TestParallelErrors(t *testing.T) {
	d := newTestDomain(t, 2)
	var nilDomain *Domain
	if err := nilDomain.Parallel(1, func(int) {}); !errors.Is(err, ErrNoDomain) {
		t.Errorf("nil domain: %v", err)
	}
	if err := d.Parallel(1, func(int) {}); !errors.Is(err, ErrNotLent) {
		t.Errorf("not lent: %v", err)
	}
	// From the workers of Sequential and Outer items.
	for _, mode := range []LocalMode{Sequential, Outer} {
		var got error
		if _, err := MapIn(context.Background(), d, mode, []int{1}, func(v int) (int, error) {
			got = d.Parallel(1, func(int) {})
			return v, nil
		}); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(got, ErrWorkerEntry) {
			t.Errorf("%v: Parallel from a worker: %v, want ErrWorkerEntry", mode, got)
		}
	}
	// Nested in a Parallel body (a worker), and concurrently with another
	// Parallel call.
	var nested, concurrent error
	_, err := MapIn(context.Background(), d, Inner, []int{1}, func(v int) (int, error) {
		bodyStarted := make(chan struct{})
		hold := make(chan struct{})
		done := make(chan error)
		go func() {
			done <- d.Parallel(1, func(int) {
				nested = d.Parallel(1, func(int) {})
				close(bodyStarted)
				<-hold
			})
		}()
		<-bodyStarted
		concurrent = d.Parallel(1, func(int) {})
		close(hold)
		return v, <-done
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(nested, ErrWorkerEntry) {
		t.Errorf("Parallel inside a body: %v, want ErrWorkerEntry", nested)
	}
	if !errors.Is(concurrent, ErrDomainBusy) {
		t.Errorf("concurrent Parallel: %v, want ErrDomainBusy", concurrent)
	}
	// The lend ended with the MapIn.
	if err := d.Parallel(1, func(int) {}); !errors.Is(err, ErrNotLent) {
		t.Errorf("after Inner: %v, want ErrNotLent", err)
	}
}

func TestParallelPanic(t *testing.T) {
	d := newTestDomain(t, 2)
	var ran atomic.Int64
	pe := catchPanic(t, func() {
		_, _ = MapIn(context.Background(), d, Inner, []int{1, 2}, func(v int) (int, error) {
			err := d.Parallel(1000, func(i int) {
				ran.Add(1)
				if i == 3 {
					panicky(2)
				}
				time.Sleep(200 * time.Microsecond) // keep the other workers from racing to the end
			})
			return v, err
		})
	})
	if pe.Value != "boom 2" || !strings.Contains(string(pe.Stack), "panicky") {
		t.Fatalf("PanicError = %v", pe)
	}
	if ran.Load() >= 1000 {
		t.Errorf("the panic did not stop the handing out of indices")
	}
	// Usable afterwards, in every mode.
	out, err := MapIn(context.Background(), d, Inner, []int{5}, func(n int) (int, error) {
		var sum atomic.Int64
		err := d.Parallel(n, func(i int) { sum.Add(int64(i)) })
		return int(sum.Load()), err
	})
	if err != nil || out[0] != 10 {
		t.Fatalf("after panic: %v, %v", out, err)
	}
}
