// Command lanes-gonum runs a real numerical workload over lanes of
// caller-held gonum workspaces.
//
// Each lane is lent one workspace.Workspace: preallocated matrices, an
// eigenvalue vector, a LAPACK work buffer and a random source, reused for
// every item and kept warm from one run to the next. An item is a seed: the
// lane draws a random n×n matrix A from it, forms AᵀA with a blocked
// symmetric product and computes its eigenvalues. The program prints a
// checksum (the sum of the largest eigenvalues, identical whatever the lane
// count or rank count) and the time of each run.
//
// Locally (no MPI, no build tag):
//
//	go run ./examples/lanes-gonum -lanes 2 -items 64
//
// Under MPI, built with -tags mpirt (run-time backend, MPI_RT_LIB names the
// wrapper library) or -tags mpicgo (cgo backend), through lanes.PmapLanes:
//
//	go build -tags mpirt -o lanes-gonum ./examples/lanes-gonum
//	MPI_RT_LIB=... mpirun -n 2 ./lanes-gonum -mpi -lanes 2
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/hataori/hataori-go/internal/workspace"
	"github.com/hataori/hataori-go/lanes"
)

// A program that uses MPI must keep its main goroutine on the OS thread
// that initialised MPI (MPI_THREAD_FUNNELED): Go would otherwise move it
// between threads. Locking in init, before main runs, does that. It costs
// nothing in the local mode.
func init() { runtime.LockOSThread() }

// config is the command line.
type config struct {
	lanes, items, n, runs int
	mpi                   bool
}

// mpiMain runs the MPI mode; it is set by mpi.go in builds tagged mpirt or
// mpicgo and stays nil otherwise.
var mpiMain func(ctx context.Context, cfg config, l *lanes.Lanes[*workspace.Workspace], seeds []uint64) error

func main() {
	var cfg config
	flag.IntVar(&cfg.lanes, "lanes", 2, "number of lanes (one gonum workspace each)")
	flag.IntVar(&cfg.items, "items", 64, "number of items (seeds)")
	flag.IntVar(&cfg.n, "n", 96, "matrix size")
	flag.IntVar(&cfg.runs, "runs", 2, "number of runs over the same, warm, workspaces")
	flag.BoolVar(&cfg.mpi, "mpi", false, "distribute the items with PmapLanes (needs -tags mpirt or mpicgo, and mpirun)")
	flag.Parse()
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "lanes-gonum:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	if cfg.lanes < 1 || cfg.items < 0 || cfg.runs < 1 {
		return fmt.Errorf("need -lanes ≥ 1, -items ≥ 0, -runs ≥ 1")
	}
	engines := make([]*workspace.Workspace, cfg.lanes)
	for i := range engines {
		ws, err := workspace.New(cfg.n)
		if err != nil {
			return err
		}
		engines[i] = ws
	}
	l, err := lanes.New(engines)
	if err != nil {
		return err
	}
	seeds := make([]uint64, cfg.items)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	if cfg.mpi {
		if mpiMain == nil {
			return errors.New("-mpi: this binary was built without an MPI backend; rebuild with -tags mpirt or -tags mpicgo")
		}
		return mpiMain(ctx, cfg, l, seeds)
	}
	for r := range cfg.runs {
		start := time.Now()
		sum, err := localChecksum(ctx, l, seeds)
		if err != nil {
			return err
		}
		fmt.Printf("run %d: %d items, %d lanes, n=%d: checksum %.10e in %v\n",
			r, len(seeds), l.Count(), cfg.n, sum, time.Since(start).Round(time.Microsecond))
	}
	printLaneItems(l)
	return nil
}

// localChecksum computes every seed on the lanes of this process.
func localChecksum(ctx context.Context, l *lanes.Lanes[*workspace.Workspace], seeds []uint64) (float64, error) {
	tops, err := lanes.MapInLanes(ctx, l, seeds, topEigen)
	if err != nil {
		return 0, err
	}
	return checksum(tops), nil
}

// topEigen is the lane callback: one item on the lane's own workspace.
func topEigen(seed uint64, ws *workspace.Workspace) (float64, error) {
	return ws.TopEigen(seed)
}

// checksum sums the results in input order, so it does not depend on which
// lane (or rank) computed which item.
func checksum(tops []float64) float64 {
	s := 0.0
	for _, v := range tops {
		s += v
	}
	return s
}

// printLaneItems shows the warm workspaces: each counts its items over all runs.
func printLaneItems(l *lanes.Lanes[*workspace.Workspace]) {
	for i, ws := range l.Engines() {
		fmt.Printf("lane %d: workspace computed %d items over all runs\n", i, ws.Items())
	}
}
