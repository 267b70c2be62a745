//go:build !mpirt && !mpicgo

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/hataori/hataori-go/hataori"
)

// run, in a build without MPI, runs the sweep on this process alone with
// hataori.MapIn (no progress bar or statistics: those are Pmap's), so that
// the model can be tried before it goes to a cluster.
func run(n, scale int, _ bool) error {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()
	ctx, stop := hataori.NotifyContext(context.Background())
	defer stop()
	_, err = hataori.MapIn(ctx, d, hataori.Outer, grid(n), func(p point) (result, error) { return simulate(ctx, p, scale) })
	var me *hataori.MapError
	switch {
	case errors.As(err, &me):
		fmt.Printf("sweep of %d points, locally: item %d failed first: %v\n", n, me.Index, me.Message)
	case err != nil:
		return err
	default:
		fmt.Printf("sweep of %d points, locally: every point succeeded\n", n)
	}
	fmt.Println("(built without MPI: build with -tags mpirt and start it under mpirun for ranks, the progress bar, CollectAll and the statistics)")
	return nil
}
