// Command mandelbrot renders the Mandelbrot set row by row with
// hataori.MapIn (Outer mode) on the default local domain, writes a PNG and
// prints the time taken and the rows per second.
//
//	go run ./examples/mandelbrot            # local, no MPI needed
//	go run ./examples/mandelbrot -o m.png -width 2048 -height 1536
//
// With -mpi it runs the MPI mode, which exists only in binaries built with
// -tags mpirt or -tags mpicgo.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"runtime"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// A program that uses MPI must call runtime.LockOSThread() in an init() of
// package main, so that the main goroutine stays on the thread that
// initialises MPI (MPI_THREAD_FUNNELED). The local mode does not need it,
// but costs nothing with it, and the MPI mode relies on it.
func init() { runtime.LockOSThread() }

// mpiMain is set by an init() in a file built with -tags mpirt or
// -tags mpicgo; it is nil in a plain build. It renders p across the ranks
// and writes p.Out on the root.
var mpiMain func(p params) error

func main() {
	p := params{CX: -0.5, CY: 0, Span: 3}
	flag.StringVar(&p.Out, "o", "mandelbrot.png", "output PNG file")
	flag.IntVar(&p.Width, "width", 1024, "image width in pixels")
	flag.IntVar(&p.Height, "height", 768, "image height in pixels")
	flag.IntVar(&p.MaxIter, "iter", 256, "maximum iterations per pixel")
	useMPI := flag.Bool("mpi", false, "render across MPI ranks (needs a build with -tags mpirt or mpicgo)")
	flag.Parse()
	if p.Width < 1 || p.Height < 1 || p.MaxIter < 1 {
		fail(errors.New("width, height and iter must be positive"))
	}
	if *useMPI {
		if mpiMain == nil {
			fail(errors.New("this binary has no MPI support: rebuild with -tags mpirt (run-time MPI, needs MPI_RT_LIB) or -tags mpicgo (CC=mpicc)"))
		}
		if err := mpiMain(p); err != nil {
			fail(err)
		}
		return
	}
	if err := runLocal(p); err != nil {
		fail(err)
	}
}

// runLocal renders on the default local domain and writes p.Out.
func runLocal(p params) error {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()
	ys := make([]int, p.Height)
	for y := range ys {
		ys[y] = y
	}
	start := time.Now()
	rows, err := hataori.MapIn(context.Background(), d, hataori.Outer, ys,
		func(y int) ([]uint8, error) { return renderRow(y, p), nil })
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	if err := writePNG(p.Out, rows, p); err != nil {
		return err
	}
	fmt.Printf("rendered %dx%d (%d iterations) on %d workers in %v: %.0f rows/s; wrote %s\n",
		p.Width, p.Height, p.MaxIter, d.Workers(), elapsed.Round(time.Millisecond),
		float64(p.Height)/elapsed.Seconds(), p.Out)
	return nil
}

func writePNG(name string, rows [][]uint8, p params) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if err := png.Encode(f, assemble(rows, p)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mandelbrot:", err)
	os.Exit(1)
}
