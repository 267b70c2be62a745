package lanes_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hataori/hataori-go/lanes"
)

// poolEngine is a test engine with a worker pool of its own, like a BLAS
// handle or a tensor engine: Compute splits its work over the pool's workers
// and refuses to be called from one of them (the precondition a lane thread
// must satisfy by construction).
type poolEngine struct {
	id      int
	jobs    chan func()
	tids    map[int]bool // the pool's worker threads, fixed after start
	wg      sync.WaitGroup
	items   atomic.Int64 // items computed: warm state kept between runs
	scratch []int64      // per-worker partial sums, reused across items and runs
}

func newPoolEngine(id, workers int) *poolEngine {
	e := &poolEngine{id: id, jobs: make(chan func()), tids: map[int]bool{}, scratch: make([]int64, workers)}
	var mu sync.Mutex
	var started sync.WaitGroup
	for range workers {
		started.Add(1)
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			mu.Lock()
			e.tids[threadID()] = true
			mu.Unlock()
			started.Done()
			for job := range e.jobs {
				job()
			}
		}()
	}
	started.Wait()
	return e
}

// String names the engine in test messages.
func (e *poolEngine) String() string { return fmt.Sprintf("engine %d", e.id) }

func (e *poolEngine) workers() int { return len(e.scratch) }

// close stops the pool.
func (e *poolEngine) close() {
	close(e.jobs)
	e.wg.Wait()
}

// sumSquares returns 0² + 1² + … + x², computed over the pool's workers
// (worker w sums the terms j ≡ w mod workers).
func (e *poolEngine) sumSquares(x int) (int64, error) {
	if e.tids[threadID()] {
		return 0, fmt.Errorf("engine %d: called from one of its own workers", e.id)
	}
	w := e.workers()
	var done sync.WaitGroup
	for k := range w {
		done.Add(1)
		e.jobs <- func() {
			defer done.Done()
			var s int64
			for j := k; j <= x; j += w {
				s += int64(j) * int64(j)
			}
			e.scratch[k] = s
		}
	}
	done.Wait()
	var s int64
	for _, p := range e.scratch {
		s += p
	}
	e.items.Add(1)
	return s, nil
}

// sumSquares is the plain lanes callback: e's sum of squares up to x.
func sumSquares(x int, e *poolEngine) (int64, error) { return e.sumSquares(x) }

// twoEngines returns engines with 1 and 3 pool workers, closed at cleanup.
func twoEngines(t interface{ Cleanup(func()) }) []*poolEngine {
	engines := []*poolEngine{newPoolEngine(0, 1), newPoolEngine(1, 3)}
	t.Cleanup(func() {
		for _, e := range engines {
			e.close()
		}
	})
	return engines
}

// newLanes returns lanes over twoEngines (engine i has 1+2i pool workers).
func newLanes(t testing.TB) *lanes.Lanes[*poolEngine] {
	t.Helper()
	l, err := lanes.New(twoEngines(t))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// closedForm is x(x+1)(2x+1)/6, the expected value of sumSquares(x).
func closedForm(x int) int64 {
	n := int64(x)
	return n * (n + 1) * (2*n + 1) / 6
}
