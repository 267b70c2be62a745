package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

// scratch is an engine with warm state: a buffer it reuses for every item,
// and a count of the items it computed, kept across runs.
type scratch struct {
	buf   []byte
	items int
}

// upper upper-cases s in the engine's buffer.
func (e *scratch) upper(s string) string {
	e.buf = append(e.buf[:0], strings.ToUpper(s)...)
	e.items++
	return string(e.buf)
}

func ExampleMapInLanes() {
	// Two engines, two lanes; use pointers so warm state persists.
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		panic(err)
	}
	words := []string{"lanes", "over", "caller", "held", "engines"}
	out, err := lanes.MapInLanes(context.Background(), l, words, func(w string, e *scratch) (string, error) {
		return e.upper(w), nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	total := 0
	for _, e := range l.Engines() {
		total += e.items
	}
	fmt.Println("items computed by the engines:", total)
	// Output:
	// [LANES OVER CALLER HELD ENGINES]
	// items computed by the engines: 5
}

func ExampleNew() {
	_, err := lanes.New[*scratch](nil)
	fmt.Println(errors.Is(err, lanes.ErrNoEngine))
	l, _ := lanes.New([]*scratch{{}, {}, {}})
	fmt.Println(l.Count())
	// Output:
	// true
	// 3
}

func ExampleLanes_RunWithCoordinator() {
	l, err := lanes.New([]*scratch{{}})
	if err != nil {
		panic(err)
	}
	results := make(chan string)
	err = l.RunWithCoordinator(context.Background(),
		// The single lane produces until the coordinator leaves.
		func(lane int, e *scratch, c *lanes.Control) error {
			for _, w := range []string{"a", "b", "c"} {
				select {
				case results <- e.upper(w):
				case <-c.Done():
					return nil
				}
			}
			<-c.Done()
			return nil
		},
		// The coordinator runs on the calling goroutine, overlapping the
		// lane; returning cancels the control, which releases the lane.
		func(c *lanes.Control) error {
			for range 3 {
				fmt.Println(<-results)
			}
			return nil
		})
	fmt.Println("err:", err)
	// Output:
	// A
	// B
	// C
	// err: <nil>
}

func ExampleLanes_Run() {
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		panic(err)
	}
	err = l.Run(context.Background(), func(lane int, e *scratch, c *lanes.Control) error {
		if lane == 1 {
			return errors.New("engine 1 is not ready")
		}
		<-c.Done() // released when lane 1 fails
		return nil
	})
	var le *lanes.LaneError
	fmt.Println(errors.As(err, &le), le.Lane, err)
	// Output:
	// true 1 lanes: lane 1: engine 1 is not ready
}

// ExamplePmapLanes distributes items over every rank's lanes. It needs an
// MPI build (-tags mpirt or mpicgo) started under mpirun, with the main
// goroutine locked to the main thread in an init of package main, so it is
// compiled but not run here.
func ExamplePmapLanes() {
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = hataori.Finalize() }()
	comm, err := hataori.World()
	if err != nil {
		fmt.Println(err)
		return
	}
	rank, err := comm.Rank()
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := hataori.Options{Root: 0, BatchSize: 4}
	items := hataori.None[[]string]()
	if rank == opts.Root {
		items = hataori.Some([]string{"every", "rank", "computes"})
	}
	out, err := lanes.PmapLanes(context.Background(), comm, l, opts, items, func(w string, e *scratch) (string, error) {
		return e.upper(w), nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if rank == opts.Root {
		fmt.Println(out) // [EVERY RANK COMPUTES]
	}
}
