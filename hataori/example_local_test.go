package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/hataori/hataori-go/hataori"
)

func ExampleMap() {
	out, err := hataori.Map(context.Background(), []string{"1", "2", "3"}, strconv.Atoi)
	fmt.Println(out, err)

	_, err = hataori.Map(context.Background(), []string{"1", "x", "y"}, strconv.Atoi)
	var me *hataori.MapError
	if errors.As(err, &me) {
		fmt.Println("failed at item", me.Index)
	}
	fmt.Println(errors.Is(err, strconv.ErrSyntax))
	// Output:
	// [1 2 3] <nil>
	// failed at item 1
	// true
}

func ExampleMapIn() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	squares, err := hataori.MapIn(context.Background(), d, hataori.Outer, []int{1, 2, 3, 4, 5},
		func(v int) (int, error) { return v * v, nil })
	fmt.Println(squares, err)
	// Output: [1 4 9 16 25] <nil>
}

func ExampleDomain() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Workers(), "workers,", d.Placement())

	if err := d.Close(); err != nil {
		fmt.Println(err)
	}
	_, err = hataori.MapIn(context.Background(), d, hataori.Sequential, []int{1},
		func(v int) (int, error) { return v, nil })
	fmt.Println(errors.Is(err, hataori.ErrDomainClosed))

	_, err = hataori.NewDomain(hataori.DomainConfig{Workers: 0})
	fmt.Println(errors.Is(err, hataori.ErrNoWorkers))
	// Output:
	// 2 workers, CallerDeclared
	// true
	// true
}

// An Inner item gets the whole domain: it fans its own work out with
// Parallel.
func ExampleDomain_Parallel() {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer d.Close()

	sums, err := hataori.MapIn(context.Background(), d, hataori.Inner, []int{10, 100},
		func(n int) (int64, error) {
			var sum atomic.Int64
			err := d.Parallel(n, func(i int) { sum.Add(int64(i)) })
			return sum.Load(), err
		})
	fmt.Println(sums, err)
	// Output: [45 4950] <nil>
}
