package hataori

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var allModes = []LocalMode{Sequential, Outer, Inner}

func TestMapInResultsInOrder(t *testing.T) {
	d := newTestDomain(t, 3)
	items := make([]int, 257)
	for i := range items {
		items[i] = i
	}
	for _, mode := range allModes {
		for _, n := range []int{0, 1, 2, 257} {
			t.Run(fmt.Sprintf("%v/%d", mode, n), func(t *testing.T) {
				var calls atomic.Int64
				out, err := MapIn(context.Background(), d, mode, items[:n], func(v int) (string, error) {
					calls.Add(1)
					return fmt.Sprint(v * v), nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(out) != n || calls.Load() != int64(n) {
					t.Fatalf("len = %d calls = %d, want %d", len(out), calls.Load(), n)
				}
				for i, s := range out {
					if s != fmt.Sprint(i*i) {
						t.Fatalf("out[%d] = %s", i, s)
					}
				}
			})
		}
	}
}

// In Outer mode, item i waits for item i+1 to finish, so the items finish
// in reverse order; the results must still come back in input order.
func TestMapInOuterReverseCompletion(t *testing.T) {
	const n = 4
	d := newTestDomain(t, n)
	finished := make([]chan struct{}, n+1)
	for i := range finished {
		finished[i] = make(chan struct{})
	}
	close(finished[n])
	var mu sync.Mutex
	var order []int
	items := []int{0, 1, 2, 3}
	out, err := MapIn(context.Background(), d, Outer, items, func(i int) (int, error) {
		<-finished[i+1]
		mu.Lock()
		order = append(order, i)
		mu.Unlock()
		close(finished[i])
		return 100 + i, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(order, []int{3, 2, 1, 0}) {
		t.Fatalf("completion order = %v, want reverse", order)
	}
	if !slices.Equal(out, []int{100, 101, 102, 103}) {
		t.Fatalf("out = %v, want input order", out)
	}
}

func TestMapInErrors(t *testing.T) {
	d := newTestDomain(t, 3)
	const n = 50
	failAt := map[int]bool{7: true, 11: true, 30: true, 49: true}
	tests := []struct {
		mode      LocalMode
		wantCalls int // Outer evaluates everything; the others stop at 7
	}{
		{Sequential, 8},
		{Outer, n},
		{Inner, 8},
	}
	for _, tt := range tests {
		t.Run(tt.mode.String(), func(t *testing.T) {
			for range 5 {
				var calls atomic.Int64
				items := make([]int, n)
				for i := range items {
					items[i] = i
				}
				out, err := MapIn(context.Background(), d, tt.mode, items, func(i int) (int, error) {
					calls.Add(1)
					if failAt[i] {
						return 0, fmt.Errorf("item %d failed: %w", i, errSentinel)
					}
					return i, nil
				})
				var me *MapError
				if out != nil || !errors.As(err, &me) || !errors.Is(err, errSentinel) {
					t.Fatalf("MapIn = %v, %v; want nil and a *MapError", out, err)
				}
				if me.Index != 7 || me.Message != "item 7 failed: sentinel" {
					t.Fatalf("error = %+v, want the lowest failing index 7", me)
				}
				if int(calls.Load()) != tt.wantCalls {
					t.Fatalf("calls = %d, want %d", calls.Load(), tt.wantCalls)
				}
			}
		})
	}
}

func TestMapInBigNonASCIIMessage(t *testing.T) {
	d := newTestDomain(t, 2)
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			_, err := MapIn(context.Background(), d, mode, []int{0, 1, 2, 3}, func(v int) (int, error) {
				if v >= 2 {
					return 0, &bigError{nonASCII10K}
				}
				return v, nil
			})
			checkBigMessage(t, err, 2)
		})
	}
}

// The entry checks run before any callback, in the documented order.
func TestMapInEntryChecks(t *testing.T) {
	closed := newTestDomain(t, 1)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	d := newTestDomain(t, 2)
	other := newTestDomain(t, 1)

	var calls atomic.Int64
	count := func(v int) (int, error) { calls.Add(1); return v, nil }
	call := func(d *Domain, mode LocalMode) error {
		_, err := MapIn(context.Background(), d, mode, []int{1, 2}, count)
		return err
	}
	// fromWorker runs check on a worker of other, inside an Outer MapIn.
	fromWorker := func(check func() error) error {
		var got error
		_, err := MapIn(context.Background(), other, Outer, []int{0}, func(int) (int, error) {
			got = check()
			return 0, nil
		})
		if err != nil {
			t.Fatalf("outer MapIn: %v", err)
		}
		return got
	}
	tests := []struct {
		name string
		err  func() error
		want error
	}{
		{"invalid mode before nil domain", func() error { return call(nil, LocalMode(9)) }, ErrInvalidMode},
		{"nil domain", func() error { return call(nil, Outer) }, ErrNoDomain},
		{"closed", func() error { return call(closed, Outer) }, ErrDomainClosed},
		{"closed before worker entry", func() error { return fromWorker(func() error { return call(closed, Sequential) }) }, ErrDomainClosed},
		{"worker of another domain", func() error { return fromWorker(func() error { return call(d, Inner) }) }, ErrWorkerEntry},
		{"worker of the same domain before busy", func() error { return fromWorker(func() error { return call(other, Outer) }) }, ErrWorkerEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls.Store(0)
			if err := tt.err(); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if calls.Load() != 0 {
				t.Fatalf("%d callbacks ran", calls.Load())
			}
		})
	}
}

// blockDomain admits an Outer MapIn on d whose callback blocks until the
// returned release is called; wait returns that MapIn's error.
func blockDomain(t *testing.T, d *Domain) (release func(), wait func() error) {
	t.Helper()
	started := make(chan struct{})
	hold := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := MapIn(context.Background(), d, Outer, []int{0}, func(int) (int, error) {
			close(started)
			<-hold
			return 0, nil
		})
		errc <- err
	}()
	<-started
	return func() { close(hold) }, func() error { return <-errc }
}

func TestMapInAdmissionContention(t *testing.T) {
	d := newTestDomain(t, 2)
	release, wait := blockDomain(t, d)
	for _, mode := range allModes {
		if _, err := MapIn(context.Background(), d, mode, []int{1}, func(v int) (int, error) {
			t.Error("callback ran on a busy domain")
			return v, nil
		}); !errors.Is(err, ErrDomainBusy) {
			t.Errorf("%v: err = %v, want ErrDomainBusy", mode, err)
		}
	}
	if err := d.executor(Outer).Run(func(int) {}, func() {}); !errors.Is(err, ErrDomainBusy) {
		t.Errorf("Pmap's executor on a busy domain: %v, want ErrDomainBusy", err)
	}
	release()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	// Admission was released: the domain is usable again.
	if _, err := MapIn(context.Background(), d, Outer, []int{1}, func(v int) (int, error) { return v, nil }); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestMapInReentry(t *testing.T) {
	d := newTestDomain(t, 2)
	d2 := newTestDomain(t, 1)
	ident := func(v int) (int, error) { return v, nil }
	tests := []struct {
		mode   LocalMode
		target *Domain
		want   error
	}{
		{Sequential, d, ErrWorkerEntry},
		{Outer, d, ErrWorkerEntry},
		{Sequential, d2, ErrWorkerEntry},
		{Outer, d2, ErrWorkerEntry},
		// Inner callbacks run on the caller's goroutine, not on a worker:
		// the same domain is busy, another one is free to use.
		{Inner, d, ErrDomainBusy},
		{Inner, d2, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/same=%v", tt.mode, tt.target == d), func(t *testing.T) {
			var inner error
			_, err := MapIn(context.Background(), d, tt.mode, []int{1}, func(v int) (int, error) {
				_, inner = MapIn(context.Background(), tt.target, Outer, []int{1, 2}, ident)
				return v, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !errors.Is(inner, tt.want) || (tt.want == nil && inner != nil) {
				t.Fatalf("nested MapIn: %v, want %v", inner, tt.want)
			}
		})
	}
}

func TestMapInPanics(t *testing.T) {
	d := newTestDomain(t, 3)
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			items := make([]int, 40)
			for i := range items {
				items[i] = i
			}
			pe := catchPanic(t, func() { _, _ = MapIn(context.Background(), d, mode, items, panicky) })
			if pe.Value != "boom 2" || !strings.Contains(string(pe.Stack), "panicky") {
				t.Fatalf("PanicError = %v", pe)
			}
			// Every worker finished and admission was released.
			out, err := MapIn(context.Background(), d, mode, items[:3], func(v int) (int, error) { return v + 1, nil })
			if err != nil || !slices.Equal(out, []int{1, 2, 3}) {
				t.Fatalf("after panic: %v, %v", out, err)
			}
		})
	}
}

// A callback calling runtime.Goexit (as t.FailNow does) ends the worker's
// goroutine; MapIn makes the caller exit the same way and the domain keeps
// its full set of workers.
func TestMapInGoexit(t *testing.T) {
	d := newTestDomain(t, 2)
	base := liveWorkers.Load()
	for _, mode := range allModes {
		t.Run(mode.String(), func(t *testing.T) {
			returned := make(chan bool, 1)
			go func() {
				normal := false
				defer func() { returned <- normal }()
				_, _ = MapIn(context.Background(), d, mode, []int{0, 1, 2}, func(v int) (int, error) {
					if v == 1 {
						runtime.Goexit()
					}
					return v, nil
				})
				normal = true
			}()
			if <-returned {
				t.Fatal("MapIn returned normally after a Goexit in a callback")
			}
			waitLiveWorkers(t, base)
			out, err := MapIn(context.Background(), d, Outer, []int{4, 5, 6, 7}, func(v int) (int, error) { return v, nil })
			if err != nil || !slices.Equal(out, []int{4, 5, 6, 7}) {
				t.Fatalf("after Goexit: %v, %v", out, err)
			}
		})
	}
}

func TestMapInCancel(t *testing.T) {
	d := newTestDomain(t, 2)
	for _, mode := range allModes {
		t.Run(mode.String()+"/before start", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := MapIn(ctx, d, mode, []int{1, 2}, func(v int) (int, error) {
				t.Error("callback ran after cancellation")
				return v, nil
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want Canceled", err)
			}
		})
		t.Run(mode.String()+"/midway", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const n = 1000
			var calls, atCancel atomic.Int64
			out, err := MapIn(ctx, d, mode, make([]int, n), func(v int) (int, error) {
				if calls.Add(1) == 5 {
					cancel()
					atCancel.Store(calls.Load())
				}
				return v, nil
			})
			if !errors.Is(err, context.Canceled) || out != nil {
				t.Fatalf("MapIn = %v, %v; want nil, Canceled", out, err)
			}
			// Sequential and Inner stop right after; in Outer each other
			// worker may finish the one item it had started.
			c := calls.Load()
			if (mode != Outer && c != 5) || c > atCancel.Load()+int64(d.Workers()-1) || c >= n {
				t.Fatalf("calls = %d, %d when cancel returned", c, atCancel.Load())
			}
		})
	}
	t.Run("Outer/running items finish", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started1 := make(chan struct{})
		var finished1 atomic.Bool
		_, err := MapIn(ctx, d, Outer, []int{0, 1, 2, 3}, func(v int) (int, error) {
			switch v {
			case 0:
				<-started1
				cancel()
			case 1:
				close(started1)
				<-ctx.Done()
				finished1.Store(true)
			}
			return v, nil
		})
		if !errors.Is(err, context.Canceled) || !finished1.Load() {
			t.Fatalf("err = %v finished = %v; want Canceled after item 1 finished", err, finished1.Load())
		}
	})
	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		_, err := MapIn(ctx, d, Sequential, make([]int, 100), func(v int) (int, error) {
			<-ctx.Done()
			return v, nil
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", err)
		}
	})
}

func TestDomainUseAfterClose(t *testing.T) {
	base := liveWorkers.Load()
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if liveWorkers.Load() != base {
		t.Fatalf("%d workers left running", liveWorkers.Load()-base)
	}
	for _, mode := range allModes {
		if _, err := MapIn(context.Background(), d, mode, []int{1}, func(v int) (int, error) { return v, nil }); !errors.Is(err, ErrDomainClosed) {
			t.Errorf("MapIn %v after Close: %v", mode, err)
		}
		if err := d.executor(mode).Run(func(int) {}, func() {}); !errors.Is(err, ErrDomainClosed) {
			t.Errorf("Pmap's executor %v after Close: %v", mode, err)
		}
	}
	if err := d.Parallel(3, func(int) {}); !errors.Is(err, ErrDomainClosed) {
		t.Errorf("Parallel after Close: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Close during an operation returns at once; the operation completes and
// the workers stop when it ends.
func TestDomainCloseWhileBusy(t *testing.T) {
	base := liveWorkers.Load()
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	release, wait := blockDomain(t, d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := MapIn(context.Background(), d, Outer, []int{1}, func(v int) (int, error) { return v, nil }); !errors.Is(err, ErrDomainClosed) {
		t.Errorf("MapIn on a closing domain: %v", err)
	}
	release()
	if err := wait(); err != nil {
		t.Fatalf("the running MapIn failed: %v", err)
	}
	waitLiveWorkers(t, base)
	<-d.shutDown
}

func TestCloseFromWorker(t *testing.T) {
	d := newTestDomain(t, 1)
	var got error
	if _, err := MapIn(context.Background(), d, Sequential, []int{1}, func(v int) (int, error) {
		got = d.Close()
		return v, nil
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(got, ErrWorkerEntry) {
		t.Fatalf("Close from a worker: %v, want ErrWorkerEntry", got)
	}
}
