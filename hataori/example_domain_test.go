package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"

	"github.com/hataori/hataori-go/hataori"
)

// One callback, three ways to run it: Map on the calling goroutine, MapIn
// on the workers of a domain, and, in an MPI build under mpirun, Pmap on
// the domains of every rank (see ExamplePmap). The results come back in
// input order every time.
func Example() {
	ctx := context.Background()
	words := []string{"warp", "weft", "shuttle", "heddle"}
	length := func(w string) (int, error) { return len(w), nil }

	serial, err := hataori.Map(ctx, words, length)
	fmt.Println(serial, err)

	d, err := hataori.NewLocalDomain()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	parallel, err := hataori.MapIn(ctx, d, hataori.Outer, words, length)
	fmt.Println(parallel, err)
	// Output:
	// [4 4 7 6] <nil>
	// [4 4 7 6] <nil>
}

// The default domain of a process: one worker per CPU it may use, at most
// GOMAXPROCS, placed by the caller or the launcher.
func ExampleNewLocalDomain() {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	sums, err := hataori.MapIn(context.Background(), d, hataori.Outer, []int{10, 20, 30},
		func(n int) (int, error) { return n * (n - 1) / 2, nil })
	fmt.Println(sums, err)
	fmt.Println(d.Workers() <= runtime.GOMAXPROCS(0), d.Placement())
	// Output:
	// [45 190 435] <nil>
	// true CallerDeclared
}

func ExampleNewDomain() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err) // a *DomainError, e.g. ErrTooManyWorkers on a single CPU
		return
	}
	defer d.Close()
	fmt.Println(d.Workers(), "workers")
	// Output: 2 workers
}

// Every NewDomain failure is a *DomainError naming the step and the CPU.
func ExampleDomainError() {
	_, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1, CPUs: []int{1 << 20}})
	var de *hataori.DomainError
	if errors.As(err, &de) {
		fmt.Println(de.Op, de.CPU, errors.Is(err, hataori.ErrCPUNotAllowed))
	}
	// Output: validate 1048576 true
}

func ExampleDomain_Workers() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	// Split work into one chunk per worker.
	chunks := make([]int, d.Workers())
	for i := range chunks {
		chunks[i] = i
	}
	out, err := hataori.MapIn(context.Background(), d, hataori.Outer, chunks,
		func(c int) (string, error) { return "chunk " + strconv.Itoa(c), nil })
	fmt.Println(out, err)
	// Output: [chunk 0 chunk 1] <nil>
}

// CPUs is the declared CPU set: the CPUs the process may use for the
// default domain, none for a domain declared without CPUs.
func ExampleDomain_CPUs() {
	local, err := hataori.NewLocalDomain()
	if err != nil {
		fmt.Println(err)
		return
	}
	first := local.CPUs()[:1] // a CPU this process may run on
	local.Close()

	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1, CPUs: first})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	fmt.Println(len(d.CPUs()), d.Placement())

	plain, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plain.Close()
	fmt.Println(plain.CPUs() == nil)
	// Output:
	// 1 CallerDeclared
	// true
}

// Placement reports what is known about where the workers run: Declared
// domains are CallerDeclared (see the Linux example of Managed placement).
func ExampleDomain_Placement() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1, Pinning: hataori.Declared})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	fmt.Println(d.Placement())
	// Output: CallerDeclared
}

// Domain ids count up from 0 in creation order, process-wide.
func ExampleDomain_ID() {
	a, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	fmt.Println(b.ID() - a.ID())
	// Output: 1
}

// Close stops the workers; it is idempotent, and the domain refuses work
// afterwards.
func ExampleDomain_Close() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Close(), d.Close())
	_, err = hataori.MapIn(context.Background(), d, hataori.Outer, []int{1},
		func(v int) (int, error) { return v, nil })
	fmt.Println(errors.Is(err, hataori.ErrDomainClosed))
	// Output:
	// <nil> <nil>
	// true
}

// In Outer mode every item is evaluated, and the error names the lowest
// failing index, whichever worker met it first.
func ExampleMapError() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	_, err = hataori.MapIn(context.Background(), d, hataori.Outer, []string{"1", "2", "x", "4", "y"}, strconv.Atoi)
	var me *hataori.MapError
	if errors.As(err, &me) {
		fmt.Println(me.Index, me.Message)
	}
	var ne *strconv.NumError // the callback's own error
	fmt.Println(errors.As(err, &ne), ne.Num)
	// Output:
	// 2 strconv.Atoi: parsing "x": invalid syntax
	// true x
}

// A panicking callback is re-raised on the caller as a *PanicError once
// every worker has stopped; the domain stays usable.
func ExamplePanicError() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	func() {
		defer func() {
			if pe, ok := recover().(*hataori.PanicError); ok {
				fmt.Println("recovered:", pe.Value)
			}
		}()
		hataori.MapIn(context.Background(), d, hataori.Outer, []int{1, 2, 3}, func(v int) (int, error) {
			if v == 2 {
				panic("two")
			}
			return v, nil
		})
	}()
	out, err := hataori.MapIn(context.Background(), d, hataori.Outer, []int{4}, func(v int) (int, error) { return v, nil })
	fmt.Println(out, err)
	// Output:
	// recovered: two
	// [4] <nil>
}

// The zero LocalMode is Auto: MapIn (and Pmap on a rank with a domain) runs
// it as Outer, spreading the items over every worker; an MPI-only Pmap (nil
// domain) runs it as Sequential. Pass Sequential or Inner to choose
// otherwise.
func ExampleLocalMode() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2, Pinning: hataori.Declared, Oversubscribe: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()
	var mode hataori.LocalMode // Auto
	squares, err := hataori.MapIn(context.Background(), d, mode, []int{1, 2, 3},
		func(v int) (int, error) { return v * v, nil }) // on both workers, concurrently
	fmt.Println(mode, squares, err)
	fmt.Println(hataori.Sequential, hataori.Outer, hataori.Inner)
	// Output:
	// Auto [1 4 9] <nil>
	// Sequential Outer Inner
}

// Maybe tells "this rank supplies nothing" (None) from "this rank supplies
// an empty value" (Some of an empty slice).
func ExampleMaybe() {
	for _, m := range []hataori.Maybe[[]int]{hataori.None[[]int](), hataori.Some([]int{}), hataori.Some([]int{1, 2})} {
		v, ok := m.Get()
		fmt.Println(ok, len(v))
	}
	// Output:
	// false 0
	// true 0
	// true 2
}

// Only the root of a collective call passes Some.
func ExampleSome() {
	rank := 0 // from world.Rank()
	items := hataori.None[[]string]()
	if rank == 0 {
		items = hataori.Some([]string{"a", "b"})
	}
	fmt.Println(items.Present())
	// Output: true
}

func ExampleNone() {
	m := hataori.None[float64]()
	v, ok := m.Get()
	fmt.Println(v, ok)
	// Output: 0 false
}

func ExampleMaybe_Get() {
	if v, ok := hataori.Some("root value").Get(); ok {
		fmt.Println(v)
	}
	// Output: root value
}

func ExampleMaybe_Present() {
	fmt.Println(hataori.Some(0).Present(), hataori.None[int]().Present())
	// Output: true false
}
