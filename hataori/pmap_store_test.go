package hataori

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/hataori/hataori-go/internal/sched"
)

// newTestStream is a stream store over a fresh open scheduler of one root
// slot and one remote slot.
func newTestStream(t *testing.T, window int, unordered bool) (*streamStore[int, int], *sched.Scheduler, *sync.Mutex) {
	t.Helper()
	sch, err := sched.New(sched.Config{Open: true, BatchSize: 0, Root: 0, Slots: []int{1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	mu := new(sync.Mutex)
	ss := newStreamStore[int, int](mu, sch, window, unordered, true)
	return ss, sch, mu
}

// TestStreamStoreDeal reads random chunks into the window, deals random
// batch sizes (spanning chunks or not) and completes them in a random
// order: every batch's items are its indices, and the batches reach the
// ready list in input order (ordered) or in completion order (unordered),
// each once.
func TestStreamStoreDeal(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 1))
		unordered := seed%2 == 1
		ss, _, mu := newTestStream(t, 1<<20, unordered)
		mu.Lock()
		read := 0
		for read < 500 {
			n := ss.reserve(1 + rng.IntN(40))
			chunk := make([]int, n)
			for i := range chunk {
				chunk[i] = read + i
			}
			read += n
			if err := ss.push(chunk); err != nil {
				t.Fatal(err)
			}
		}
		ss.close()
		var open []sched.Batch
		next := 0
		var id int64
		for next < read {
			b := sched.Batch{ID: id, Start: next, Count: min(1+rng.IntN(60), read-next)}
			id++
			next = b.End()
			// The scheduler's side of the deal, by hand: the store only
			// reads Start and Count.
			ss.assigned(b)
			in := ss.open[b.Start].in
			if len(in) != b.Count || in[0] != b.Start || in[len(in)-1] != b.End()-1 {
				t.Fatalf("seed %d: batch %+v got items %v", seed, b, in)
			}
			open = append(open, b)
		}
		var done []int
		for len(open) > 0 {
			k := rng.IntN(len(open))
			b := open[k]
			open = slices.Delete(open, k, k+1)
			ss.completed(b, true)
			done = append(done, b.Start)
		}
		var got []int
		for _, sb := range ss.ready {
			got = append(got, sb.b.Start)
		}
		want := done
		if !unordered {
			want = slices.Sorted(slices.Values(done))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d (unordered %v): ready %v, want %v", seed, unordered, got, want)
		}
		if len(ss.queue) != 0 || len(ss.open) != 0 {
			t.Fatalf("seed %d: %d chunks and %d open batches left", seed, len(ss.queue), len(ss.open))
		}
		mu.Unlock()
	}
}

// TestStreamStoreWindow: reserve never lets read − sunk exceed the window,
// gives back what was not read, and returns 0 once the call has ended.
func TestStreamStoreWindow(t *testing.T) {
	ss, _, mu := newTestStream(t, 10, false)
	mu.Lock()
	if n := ss.reserve(7); n != 7 {
		t.Fatalf("reserve(7) = %d on an empty window of 10", n)
	}
	if n := ss.reserve(7); n != 3 {
		t.Fatalf("reserve(7) = %d with 3 left", n)
	}
	ss.unreserve(2)
	if ss.read != 8 || ss.peakRes != 10 {
		t.Fatalf("read %d, peak %d; want 8 and 10", ss.read, ss.peakRes)
	}
	ss.sunk = 5
	if n := ss.reserve(100); n != 7 {
		t.Fatalf("reserve(100) = %d with 5 through the sink, want 7", n)
	}
	mu.Unlock()
	got := make(chan int)
	go func() {
		mu.Lock()
		defer mu.Unlock()
		got <- ss.reserve(1) // the window is full: waits for the end
	}()
	mu.Lock()
	ss.end()
	mu.Unlock()
	if n := <-got; n != 0 {
		t.Fatalf("reserve after end = %d, want 0", n)
	}
}

// TestStreamStoreMissing: under CollectAll the items of batches that
// failed as a whole and those read but never dealt are missing, minus the
// listed failures, as sorted disjoint ranges.
func TestStreamStoreMissing(t *testing.T) {
	ss, sch, mu := newTestStream(t, 100, false)
	mu.Lock()
	defer mu.Unlock()
	ss.reserve(30)
	chunk := make([]int, 30)
	if err := ss.push(chunk); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		d, b, err := sch.RootDispatch(0)
		if err != nil || d != sched.Assign {
			t.Fatal(d, err)
		}
		ss.assigned(b)
		if b.Count != 1 {
			t.Fatalf("first automatic batch of %d items", b.Count)
		}
		if err := sch.CompleteRoot(0, b.Start != 2); err != nil {
			t.Fatal(err)
		}
		ss.completed(b, b.Start != 2) // batch [2, 3) fails as a whole
	}
	got := ss.missing(sch, map[int]bool{4: true})
	want := []missingRange{{2, 4}, {5, 30}} // [2, 3) failed, [3, 30) never dealt, 4 listed
	if !slices.Equal(got, want) {
		t.Fatalf("missing %v, want %v", got, want)
	}
}
