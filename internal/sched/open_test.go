package sched

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestOpenInput drives an open input (Config.Open) with random Extend
// chunks and random slot orders, fixed and automatic sizes, with and
// without a Window (the factoring base while open): every index is
// assigned once, in order, only once it was available; a dispatch waits
// (Wait, slot still Idle) exactly when nothing (fixed: less than a batch)
// is available before CloseInput, and stops only after it; a fixed size
// gives the fixed batches whatever the chunks; Check holds at the end.
func TestOpenInput(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := Config{Open: true, BatchSize: []int{0, 1, 3, 16}[seed%4], Window: []int{0, 64}[seed/4%2], Root: 0, Slots: []int{1 + rng.IntN(3), 1 + rng.IntN(2), 1}}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		total := rng.IntN(300)
		avail, next, closed := 0, 0, false
		var id int64
		running := map[[2]int]Batch{}
		for step := 0; !s.Done(); step++ {
			if step > 100000 {
				t.Fatalf("seed %d: no end", seed)
			}
			if !closed && rng.IntN(3) == 0 {
				n := min(rng.IntN(20), total-avail)
				if err := s.Extend(n); err != nil {
					t.Fatal(err)
				}
				if avail += n; avail == total && rng.IntN(2) == 0 {
					s.CloseInput()
					closed = true
				}
				continue
			}
			r := rng.IntN(len(cfg.Slots))
			j := rng.IntN(cfg.Slots[r])
			key := [2]int{r, j}
			if b, ok := running[key]; ok {
				delete(running, key)
				if r == 0 {
					err = s.CompleteRootTimed(j, true, Timing{Compute: time.Duration(b.Count) * time.Microsecond})
				} else {
					err = s.OnResultTimed(r, j, b.ID, b.Indices(), true, Timing{Compute: time.Duration(b.Count) * time.Microsecond, RoundTrip: time.Duration(b.Count)*time.Microsecond + 20*time.Microsecond})
				}
				if err != nil {
					t.Fatal(err)
				}
				continue
			}
			if st := s.State(r, j); st != Idle {
				if st == StopReceived && !s.RankStopped(r) {
					continue
				}
				if st == StopReceived && !s.RankDrained(r) {
					if err := s.OnDrain(r); err != nil {
						t.Fatal(err)
					}
				}
				continue
			}
			var d Decision
			var b Batch
			if r == 0 {
				d, b, err = s.RootDispatch(j)
			} else {
				d, b, err = s.OnReady(r, j)
			}
			if err != nil {
				t.Fatal(err)
			}
			rem := avail - next
			switch d {
			case Wait:
				if closed || (rem > 0 && rem >= cfg.BatchSize) {
					t.Fatalf("seed %d: Wait with %d available (closed %v, batch %d)", seed, rem, closed, cfg.BatchSize)
				}
				if s.State(r, j) != Idle {
					t.Fatalf("seed %d: slot %v after Wait", seed, s.State(r, j))
				}
			case Stop:
				if !closed || rem != 0 {
					t.Fatalf("seed %d: Stop with %d available (closed %v)", seed, rem, closed)
				}
			case Assign:
				if b.Start != next || b.Count < 1 || b.End() > avail || b.ID != id {
					t.Fatalf("seed %d: batch %+v, want start %d id %d within %d", seed, b, next, id, avail)
				}
				if cfg.BatchSize > 0 && b.Count != cfg.BatchSize && !(closed && b.End() == avail) {
					t.Fatalf("seed %d: fixed batch of %d items, want %d", seed, b.Count, cfg.BatchSize)
				}
				next, id = b.End(), id+1
				running[key] = b
			}
			if !closed && avail == total && rng.IntN(4) == 0 {
				s.CloseInput()
				closed = true
			}
		}
		if next != total || s.Completed() != total {
			t.Fatalf("seed %d: assigned %d, completed %d of %d", seed, next, s.Completed(), total)
		}
		if err := s.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestOpenInputRefusals: Extend after CloseInput and a negative Extend are
// errors; Exhausted waits for CloseInput; a failure stops an open input.
func TestOpenInputRefusals(t *testing.T) {
	s, err := New(Config{Open: true, Root: 0, Slots: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Exhausted() {
		t.Fatal("an open input with nothing yet is exhausted")
	}
	if err := s.Extend(-1); err == nil {
		t.Fatal("Extend(-1) accepted")
	}
	if d, _, _ := s.RootDispatch(0); d != Wait {
		t.Fatalf("dispatch on an empty open input: %v, want Wait", d)
	}
	s.Fail()
	if d, _, _ := s.RootDispatch(0); d != Stop {
		t.Fatalf("dispatch after Fail: %v, want Stop", d)
	}
	s2, _ := New(Config{Open: true, Root: 0, Slots: []int{1}})
	s2.CloseInput()
	if !s2.Exhausted() {
		t.Fatal("a closed empty input is not exhausted")
	}
	if err := s2.Extend(1); err == nil {
		t.Fatal("Extend after CloseInput accepted")
	}
}
