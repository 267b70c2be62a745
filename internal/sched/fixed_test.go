package sched

import (
	"fmt"
	"reflect"
	"testing"
)

// dealAll dispatches every slot of every rank round-robin (remote slots by
// OnReady, the root's by RootDispatch), completing each batch at once,
// until every slot has stopped, and returns the batches in assignment
// order. It uses only the measurement-free transitions.
func dealAll(t *testing.T, s *Scheduler, cfg Config) []Batch {
	t.Helper()
	var out []Batch
	for progress := true; progress; {
		progress = false
		for r, n := range cfg.Slots {
			for j := range n {
				if s.State(r, j) != Idle {
					continue
				}
				progress = true
				var d Decision
				var b Batch
				var err error
				if r == cfg.Root {
					d, b, err = s.RootDispatch(j)
				} else {
					d, b, err = s.OnReady(r, j)
				}
				if err != nil {
					t.Fatal(err)
				}
				if d != Assign {
					continue
				}
				out = append(out, b)
				if r == cfg.Root {
					err = s.CompleteRoot(j, true)
				} else {
					err = s.OnResult(r, j, b.ID, b.Indices(), true)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return out
}

// TestFixedBatchSizeGivesTodaysBatches pins the fixed-size behaviour (the
// seed's): with BatchSize B > 0, batch k is [k·B, min((k+1)·B, N)) with id
// k, whatever the ranks, slots and measurements. The expected sequences
// are written out literally for small cases and by the formula for the
// rest.
func TestFixedBatchSizeGivesTodaysBatches(t *testing.T) {
	literal := []struct {
		cfg  Config
		want []Batch
	}{
		{Config{Items: 7, BatchSize: 3, Root: 0, Slots: []int{1, 2}},
			[]Batch{{0, 0, 3}, {1, 3, 3}, {2, 6, 1}}},
		{Config{Items: 5, BatchSize: 1, Root: 1, Slots: []int{2, 1}},
			[]Batch{{0, 0, 1}, {1, 1, 1}, {2, 2, 1}, {3, 3, 1}, {4, 4, 1}}},
		{Config{Items: 8, BatchSize: 4, Root: 0, Slots: []int{3}},
			[]Batch{{0, 0, 4}, {1, 4, 4}}},
		{Config{Items: 2, BatchSize: 16, Root: 0, Slots: []int{1, 1, 1}},
			[]Batch{{0, 0, 2}}},
		{Config{Items: 0, BatchSize: 2, Root: 0, Slots: []int{1, 1}}, nil},
	}
	for _, c := range literal {
		got := dealAll(t, mustNew(t, c.cfg), c.cfg)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: batches %v, want %v", c.cfg, got, c.want)
		}
	}
	for _, cfg := range []Config{
		{Items: 1000, BatchSize: 1, Root: 0, Slots: []int{2, 2}},
		{Items: 1001, BatchSize: 16, Root: 2, Slots: []int{1, 3, 2, 1}},
		{Items: 20000, BatchSize: 256, Root: 0, Slots: []int{1, 1}},
		{Items: 99, BatchSize: 100, Root: 0, Slots: []int{4}},
	} {
		got := dealAll(t, mustNew(t, cfg), cfg)
		var want []Batch
		for k := 0; k*cfg.BatchSize < cfg.Items; k++ {
			start := k * cfg.BatchSize
			want = append(want, Batch{ID: int64(k), Start: start, Count: min(cfg.BatchSize, cfg.Items-start)})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: %d batches, want %d (first difference in %v)", cfg, len(got), len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []Batch) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("position %d: %+v, want %+v", i, a[i], b[i])
		}
	}
	return "length"
}
