//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapWithoutInitLock checks that a program that forgets
// runtime.LockOSThread() in init still works: InitThread locks its caller
// to its thread, so the goroutine stays the MPI main thread however much
// the scheduler moves goroutines before the call (here a test goroutine,
// which nothing else locks, with sleeps and busy goroutines in between).
func TestPmapWithoutInitLock(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 90 * time.Second})
		}
		return
	}
	if _, err := InitThread(ThreadFunneled); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			mpi.Abort(mpi.World(), 1)
		}
		if err := Finalize(); err != nil {
			t.Errorf("Finalize: %v", err)
		}
		runtime.UnlockOSThread() // hand the thread back (see mpitest.Init)
	})
	tid := unix.Gettid()
	// Start-up work that moves unlocked goroutines between threads.
	stop := make(chan struct{})
	for range 4 {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
	}
	for range 200 {
		time.Sleep(50 * time.Microsecond)
		runtime.GC()
		if got := unix.Gettid(); got != tid {
			t.Fatalf("the goroutine that called InitThread moved from thread %d to %d", tid, got)
		}
	}
	close(stop)
	world, err := World()
	if err != nil {
		t.Fatal(err)
	}
	rank, err := world.Rank()
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewLocalDomain()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	items := None[[]int]()
	if rank == 0 {
		xs := make([]int, 500)
		for i := range xs {
			xs[i] = i
		}
		items = Some(xs)
	}
	out, err := Pmap(context.Background(), world, d, Options{Mode: Outer}, items, func(x int) (int, error) { return 2 * x, nil })
	if err != nil {
		t.Fatalf("rank %d: Pmap: %v", rank, err)
	}
	if rank == 0 {
		for i, v := range out {
			if v != 2*i {
				t.Fatalf("out[%d] = %d", i, v)
			}
		}
	}
	if _, err := Pmap(context.Background(), world, nil, Options{}, items, func(x int) (int, error) { return x, nil }); err != nil {
		t.Fatalf("rank %d: MPI-only Pmap: %v", rank, err)
	}
}
