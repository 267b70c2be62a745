// Command sweep-csv is a parameter sweep that writes one CSV on the root.
//
// For every growth rate r of the logistic map x ← r·x·(1−x) it estimates
// the Lyapunov exponent λ (positive: chaos) and the period of the attractor
// (0: none found up to 64), and the root writes one row per r, in order:
//
//	r,lyapunov,period
//	2.800000,-0.223144,1
//
// Every rank runs the same program. Under MPI, hataori.PmapStream deals the
// values of r out to every rank, the root included, and each rank evaluates
// its batches on a local domain in Outer mode: the root generates the values
// lazily (an iter.Seq, read only as slots need them) and writes each row
// from the sink as it comes, in order, so it holds at most a window of
// values and rows whatever -n. The CSV appears under its name only once
// complete. Without MPI (a build without the mpirt or mpicgo tag)
// InitThread returns hataori.ErrNoMPI and the program runs the same sweep
// with hataori.MapIn; the CSV is identical byte for byte.
//
//	go run ./examples/sweep-csv -o sweep.csv
//	go build -tags mpirt -o sweep-csv ./examples/sweep-csv
//	MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI mpirun -n 2 ./sweep-csv -o sweep.csv
//
// Beyond r = 4 the orbit leaves [0, 1] and the callback fails: try -rmax 4.2.
// The sweep then fails on every rank with the same *hataori.PmapError,
// naming the lowest failing r, and every rank exits with status 1.
package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"

	"github.com/hataori/hataori-go/hataori"
)

// MPI is called from the thread that initialised it: keep the main
// goroutine on the main thread (see the README, "The one rule").
func init() { runtime.LockOSThread() }

// result is one row of the CSV. Its fields are exported so that it can
// cross ranks.
type result struct {
	R, Lyapunov float64
	Period      int
}

func main() {
	out := flag.String("o", "sweep.csv", "CSV file written by the root")
	n := flag.Int("n", 241, "number of values of r")
	rmin := flag.Float64("rmin", 2.8, "smallest r")
	rmax := flag.Float64("rmax", 4.0, "largest r (beyond 4 the orbit escapes and the sweep fails)")
	flag.Parse()
	if *n < 2 || !(*rmin < *rmax) {
		fail(errors.New("need -n ≥ 2 and -rmin < -rmax"))
	}
	rs := points(*n, *rmin, *rmax)

	ctx := context.Background()
	_, err := hataori.InitThread(hataori.ThreadFunneled)
	if errors.Is(err, hataori.ErrNoMPI) {
		if err := runLocal(ctx, slices.Collect(rs), *out); err != nil {
			fail(err)
		}
		return
	}
	if err != nil {
		fail(err)
	}
	err = runMPI(ctx, rs, *out)
	if err != nil {
		// Report before finalising: a rank that exits with an error makes
		// mpirun stop the others, which must have printed theirs by then.
		fmt.Fprintln(os.Stderr, "sweep-csv:", err)
	}
	if ferr := hataori.Finalize(); ferr != nil {
		fail(ferr)
	}
	if err != nil {
		os.Exit(1)
	}
}

// points yields n values of r from rmin to rmax, computed as they are read.
func points(n int, rmin, rmax float64) iter.Seq[float64] {
	return func(yield func(float64) bool) {
		for i := range n {
			if !yield(rmin + (rmax-rmin)*float64(i)/float64(n-1)) {
				return
			}
		}
	}
}

// runMPI sweeps rs across the MPI ranks; the root writes the CSV row by row.
func runMPI(ctx context.Context, rs iter.Seq[float64], out string) error {
	world, err := hataori.World()
	if err != nil {
		return err
	}
	rank, err := world.Rank()
	if err != nil {
		return err
	}
	size, err := world.Size()
	if err != nil {
		return err
	}
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()

	items := hataori.None[iter.Seq[float64]]() // only the root supplies the items
	var w *csvRows
	var sink func(int, result) error // and receives the rows
	if rank == 0 {
		if w, err = newCSVRows(out); err != nil {
			return err
		}
		items, sink = hataori.Some(rs), w.add
	}
	f := func(_ context.Context, r float64) (result, error) { return logistic(r) }
	err = hataori.PmapStream(ctx, world, d, hataori.Options{Root: 0, Mode: hataori.Outer}, items, f, sink)
	if w != nil {
		err = w.finish(err)
	}
	var pe *hataori.PmapError
	if errors.As(err, &pe) {
		// Every rank holds an identical *PmapError (same Kind, Key, Rank
		// and Message): the lowest failing r wins, whichever rank met it.
		return fmt.Errorf("rank %d of %d: sweep failed: %s error reported by rank %d: %s", rank, size, pe.Kind, pe.Rank, pe.Message)
	}
	if err != nil {
		return err
	}
	if rank != 0 {
		return nil // the root wrote every row, in input order
	}
	fmt.Printf("sweep-csv: %d ranks, Outer on a local domain of each\n", size)
	w.summary()
	return nil
}

// runLocal is the sweep without MPI, on this process's local domain.
func runLocal(ctx context.Context, rs []float64, out string) error {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return err
	}
	defer d.Close()
	rows, err := hataori.MapIn(ctx, d, hataori.Outer, rs, logistic)
	var me *hataori.MapError
	if errors.As(err, &me) {
		return fmt.Errorf("sweep failed at item %d: %s", me.Index, me.Message)
	}
	if err != nil {
		return err
	}
	fmt.Println("sweep-csv: no MPI in this build, Outer on the local domain")
	w, err := newCSVRows(out)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if err = w.add(i, r); err != nil {
			break
		}
	}
	if err = w.finish(err); err == nil {
		w.summary()
	}
	return err
}

// logistic iterates the logistic map from x = 0.3: a transient, then the
// Lyapunov exponent as the mean of log|f'(x)|, then the period of the
// orbit. It fails when the orbit leaves [0, 1] (r > 4).
func logistic(r float64) (result, error) {
	const transient, samples, maxPeriod = 1000, 4000, 64
	x := 0.3
	step := func(i int) error {
		x = r * x * (1 - x)
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("r=%.6f: the orbit left [0, 1] at step %d", r, i)
		}
		return nil
	}
	for i := range transient {
		if err := step(i); err != nil {
			return result{}, err
		}
	}
	sum := 0.0
	for i := range samples {
		if err := step(transient + i); err != nil {
			return result{}, err
		}
		sum += math.Log(math.Abs(r * (1 - 2*x)))
	}
	res := result{R: r, Lyapunov: sum / samples}
	x0 := x
	for p := 1; p <= maxPeriod; p++ {
		if err := step(transient + samples + p); err != nil {
			return result{}, err
		}
		if math.Abs(x-x0) < 1e-6 {
			res.Period = p
			break
		}
	}
	return res, nil
}

// csvRows writes the CSV one row at a time into name+".partial", renamed
// to name once every row is in (finish), removed when the sweep fails.
type csvRows struct {
	name    string
	f       *os.File
	w       *csv.Writer
	n       int
	chaotic int
}

func newCSVRows(name string) (*csvRows, error) {
	f, err := os.Create(name + ".partial")
	if err != nil {
		return nil, err
	}
	c := &csvRows{name: name, f: f, w: csv.NewWriter(f)}
	c.w.Write([]string{"r", "lyapunov", "period"})
	return c, nil
}

// add writes row i (rows come in order).
func (c *csvRows) add(_ int, r result) error {
	c.n++
	if r.Lyapunov > 0 {
		c.chaotic++
	}
	return c.w.Write([]string{
		strconv.FormatFloat(r.R, 'f', 6, 64),
		strconv.FormatFloat(r.Lyapunov, 'f', 6, 64),
		strconv.Itoa(r.Period),
	})
}

// finish completes the file after a sweep that returned err: renamed into
// place on success, removed otherwise. It returns err or the file's own.
func (c *csvRows) finish(err error) error {
	c.w.Flush()
	if err == nil {
		err = c.w.Error()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		return os.Rename(c.name+".partial", c.name)
	}
	os.Remove(c.name + ".partial")
	return err
}

// summary prints what does not depend on how the sweep ran.
func (c *csvRows) summary() {
	fmt.Printf("sweep-csv: %d values of r, %d chaotic (λ > 0); wrote %s\n", c.n, c.chaotic, c.name)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sweep-csv:", err)
	os.Exit(1)
}
