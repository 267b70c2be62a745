// Command sweep-progress is a parameter sweep across MPI ranks as a user
// would run it for hours: hataori.PmapContext over a grid of parameters,
// with a terminal progress bar on rank 0 (fed by Options.OnProgress, on
// the coordinator), the CollectAll error policy (every point runs; the
// failed ones are listed at the end with their input index and rank, the
// others' results are kept), a callback that stops early when the call is
// stopping (Ctrl-C on the launcher stops every rank through
// hataori.NotifyContext, whichever signal the launcher passes on; the
// root prints the finished points, and every rank exits with status 1),
// and the call's statistics (Options.Stats) at the end.
//
//	go build -tags mpirt -o sweep ./examples/sweep-progress
//	MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI mpirun --oversubscribe -n 4 ./sweep
//	MPI_RT_LIB=$HATAORI_WRAPPER_MPICH mpiexec.mpich -n 4 ./sweep -points 400
//
// Each point integrates a driven, damped oscillator x” + c x' + x = A
// cos(w t) for a cost that grows with the drive frequency; points whose
// damping is negative diverge and fail. The progress bar is
// github.com/schollz/progressbar (this example's dependency only: the
// hataori packages do not use it).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
)

// MPI programs lock the main goroutine to the main thread.
func init() { runtime.LockOSThread() }

// point is one parameter set of the sweep.
type point struct {
	Damping, Drive, Omega float64
}

// result is what a point yields: the steady amplitude and the steps taken.
type result struct {
	Amplitude float64
	Steps     int
}

// errDiverged is the error of a point whose solution grows without bound.
var errDiverged = errors.New("the oscillator diverged")

// grid returns n points: damping from -0.2 (unstable) to 1, drive
// frequencies from 0.2 to 3.
func grid(n int) []point {
	side := int(math.Ceil(math.Sqrt(float64(n))))
	pts := make([]point, 0, n)
	for i := 0; len(pts) < n; i++ {
		c := -0.2 + 1.2*float64(i/side)/float64(side)
		w := 0.2 + 2.8*float64(i%side)/float64(side)
		pts = append(pts, point{Damping: c, Drive: 1, Omega: w})
	}
	return pts
}

// simulate integrates one point (semi-implicit Euler), checking ctx every
// few thousand steps so that a stopping call does not wait for it.
func simulate(ctx context.Context, p point, scale int) (result, error) {
	steps := scale * int(2000*(1+p.Omega))
	const dt = 1e-3
	x, v, amp := 0.0, 0.0, 0.0
	for i := range steps {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return result{}, err
			}
		}
		a := p.Drive*math.Cos(p.Omega*float64(i)*dt) - p.Damping*v - x
		v += a * dt
		x += v * dt
		if math.Abs(x) > 50 {
			return result{}, fmt.Errorf("damping %.3f, frequency %.3f: %w at step %d", p.Damping, p.Omega, errDiverged, i)
		}
		if i > steps/2 {
			amp = math.Max(amp, math.Abs(x))
		}
	}
	return result{Amplitude: amp, Steps: steps}, nil
}

func main() {
	points := flag.Int("points", 200, "points in the sweep")
	scale := flag.Int("scale", 40, "work per point (integration steps ×2000×(1+frequency))")
	bar := flag.Bool("bar", true, "show the progress bar (on rank 0)")
	flag.Parse()
	if err := run(*points, *scale, *bar); err != nil {
		fmt.Fprintln(os.Stderr, "sweep-progress:", err)
		os.Exit(1)
	}
}
