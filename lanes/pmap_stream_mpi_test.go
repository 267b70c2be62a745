//go:build mpirt || mpicgo

package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/hataori/hataori-go/lanes"
)

// TestPmapLanesStream runs PmapLanesStream on 1, 2 and 4 ranks with two
// lanes each, in both orders: every item once through the root's sink (in
// input order, or all of them unordered), each with its lane's engine,
// then a sink error that every rank returns alike.
func TestPmapLanesStream(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 2 * time.Minute})
		}
		return
	}
	rank, _ := mpitest.Init(t)
	comm, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	l, err := lanes.New([]int{1000, 2000})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for _, unordered := range []bool{false, true} {
		items := hataori.None[iter.Seq[int]]()
		var sink func(int, int) error
		seen := make([]int, n)
		next := 0
		if rank == 0 {
			items = hataori.Some(iter.Seq[int](func(yield func(int) bool) {
				for i := range n {
					if !yield(i) {
						return
					}
				}
			}))
			sink = func(i, u int) error {
				if !unordered && i != next {
					return fmt.Errorf("item %d after %d", i, next-1)
				}
				next++
				if u != 1000+i && u != 2000+i {
					return fmt.Errorf("item %d: %d from no engine", i, u)
				}
				seen[i]++
				return nil
			}
		}
		err := lanes.PmapLanesStream(context.Background(), comm, l, hataori.Options{Window: 32, Unordered: unordered}, items,
			func(_ context.Context, x, engine int) (int, error) { return engine + x, nil }, sink)
		if err != nil {
			t.Errorf("unordered=%v: %v", unordered, err)
		}
		for i, c := range seen {
			if rank == 0 && c != 1 {
				t.Errorf("unordered=%v: item %d through the sink %d times", unordered, i, c)
				break
			}
		}
	}
	items := hataori.None[iter.Seq[int]]()
	var sink func(int, int) error
	errFull := errors.New("disk full")
	if rank == 0 {
		items = hataori.Some(iter.Seq[int](func(yield func(int) bool) {
			for i := 0; yield(i); i++ {
			}
		}))
		sink = func(i, _ int) error {
			if i == 77 {
				return errFull
			}
			return nil
		}
	}
	err = lanes.PmapLanesStream(context.Background(), comm, l, hataori.Options{}, items,
		func(_ context.Context, x, engine int) (int, error) { return engine + x, nil }, sink)
	var pe *hataori.PmapError
	if !errors.As(err, &pe) || pe.Kind != hataori.KindUser || pe.Index != 77 || pe.Rank != 0 || (rank == 0 && !errors.Is(err, errFull)) {
		t.Errorf("rank %d: %v, want the sink's failure at item 77 on the root", rank, err)
	}
}
