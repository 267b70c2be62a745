package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

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

// Lanes lend caller-held engines to items: here two engines with warm
// buffers, each keeping count of its items across runs.
func Example() {
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		panic(err)
	}
	for run := range 2 {
		out, err := lanes.MapInLanes(context.Background(), l, []string{"warp", "weft"},
			func(w string, e *scratch) (string, error) { return e.upper(w), nil })
		fmt.Println(run, out, err)
	}
	items := 0
	for _, e := range l.Engines() {
		items += e.items
	}
	fmt.Println(items, "items on", l.Count(), "engines")
	// Output:
	// 0 [WARP WEFT] <nil>
	// 1 [WARP WEFT] <nil>
	// 4 items on 2 engines
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

// Count is the number of lanes: one per engine.
func ExampleLanes_Count() {
	engines := make([]*scratch, 3)
	for i := range engines {
		engines[i] = &scratch{}
	}
	l, err := lanes.New(engines)
	if err != nil {
		panic(err)
	}
	fmt.Println(l.Count(), "lanes")
	// Output: 3 lanes
}

// The engines stay the caller's: warm state they keep survives the run.
func ExampleLanes_Engines() {
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		panic(err)
	}
	for range 2 { // two runs over the same engines
		if _, err := lanes.MapInLanes(context.Background(), l, []string{"a", "b", "c", "d"},
			func(w string, e *scratch) (string, error) { return e.upper(w), nil }); err != nil {
			panic(err)
		}
	}
	total := 0
	for _, e := range l.Engines() { // lane order
		total += e.items
	}
	fmt.Println(total, "items over both runs")
	// Output: 8 items over both runs
}

// Cancel releases every lane waiting on Done; any lane or the coordinator
// may call it.
func ExampleControl_Cancel() {
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		panic(err)
	}
	err = l.Run(context.Background(), func(lane int, e *scratch, c *lanes.Control) error {
		if lane == 0 {
			c.Cancel() // lane 0 decides the run is over
		}
		<-c.Done()
		return nil
	})
	fmt.Println(err)
	// Output: <nil>
}

// A lane that works in steps polls Canceled between them.
func ExampleControl_Canceled() {
	l, err := lanes.New([]*scratch{{}})
	if err != nil {
		panic(err)
	}
	steps := 0
	err = l.RunWithCoordinator(context.Background(),
		func(lane int, e *scratch, c *lanes.Control) error {
			for !c.Canceled() {
				steps++
				if steps == 3 {
					c.Cancel()
				}
			}
			return nil
		},
		func(c *lanes.Control) error { <-c.Done(); return nil })
	fmt.Println(steps, err)
	// Output: 3 <nil>
}

// Done is closed when the run is cancelled: here by a failing lane, which
// releases the lane that waits.
func ExampleControl_Done() {
	l, err := lanes.New([]*scratch{{}, {}})
	if err != nil {
		panic(err)
	}
	err = l.Run(context.Background(), func(lane int, e *scratch, c *lanes.Control) error {
		if lane == 1 {
			return errors.New("no input")
		}
		select {
		case <-c.Done():
			return nil
		case <-time.After(time.Minute):
			return errors.New("never released")
		}
	})
	fmt.Println(err)
	// Output: lanes: lane 1: no input
}

// A lane error names the lowest failing lane and keeps the body's error.
func ExampleLaneError() {
	l, err := lanes.New([]*scratch{{}, {}, {}})
	if err != nil {
		panic(err)
	}
	errBad := errors.New("engine not ready")
	err = l.Run(context.Background(), func(lane int, e *scratch, c *lanes.Control) error {
		if lane > 0 {
			return fmt.Errorf("engine %d: %w", lane, errBad)
		}
		return nil
	})
	var le *lanes.LaneError
	fmt.Println(errors.As(err, &le), le.Lane, errors.Is(err, errBad))
	// Output: true 1 true
}

// A coordinator that fails while every lane ended cleanly gives a
// *CoordinatorError.
func ExampleCoordinatorError() {
	l, err := lanes.New([]*scratch{{}})
	if err != nil {
		panic(err)
	}
	err = l.RunWithCoordinator(context.Background(),
		func(lane int, e *scratch, c *lanes.Control) error { <-c.Done(); return nil },
		func(c *lanes.Control) error { return errors.New("lost the connection") })
	var ce *lanes.CoordinatorError
	fmt.Println(errors.As(err, &ce), ce.Err)
	// Output: true lost the connection
}

// ExamplePmapLanes distributes items over every rank's lanes. It needs an
// MPI build (-tags mpirt or mpicgo) started under mpirun, with the main
// goroutine locked to the main thread in an init of package main, so go
// test compiles it but does not run it (no Output comment):
// TestExamplesMPI (example_mpi_test.go) runs it on 2 ranks under the
// multi-rank harness and checks what it prints.
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
