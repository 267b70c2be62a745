// Command timeline draws where a Pmap call's batches ran: one row per rank
// and slot, one bar per batch (from hataori.CallStats with RecordSpans),
// as a PNG, so that the load balance of a run can be seen rather than read.
//
// Under mpirun (a build with -tags mpirt or mpicgo) it runs a skewed
// sweep itself: -items heavy-tailed sleeps (Pareto, alpha 1.2, in a fixed
// pseudo-random order) summing to -total, batch size -batch, MPI-only or
// hybrid (NewLocalDomain on every rank, Mode Outer), and rank 0 draws the
// picture (and, with -json, saves the spans). Without MPI, -in draws spans
// saved before. scripts/timeline.sh builds it and runs it on 4 ranks:
//
//	go build -tags mpirt -o timeline ./scripts/timeline
//	MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI mpirun --oversubscribe -n 4 ./timeline -o timeline.png
//	go run ./scripts/timeline -in spans.json -o timeline.png
//
// It is a separate main package so that its plotting library
// (gonum.org/v1/plot) stays out of the dependency tree of hataori and
// lanes.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

func init() { runtime.LockOSThread() }

// record is what a picture is drawn from, and what -json saves.
type record struct {
	Title string `json:"title"`
	// Slots[r] is rank r's slot count (len(CallStats.Items[r])).
	Slots []int               `json:"slots"`
	Wall  time.Duration       `json:"wall_ns"`
	Busy  [][]time.Duration   `json:"busy_ns"`
	Spans []hataori.BatchSpan `json:"spans"`
	// Sizes[r][s] summarises the batch sizes rank r's slot s got.
	Sizes [][]hataori.BatchSizes `json:"sizes,omitempty"`
}

// sweep is the run's configuration.
type sweep struct {
	items int
	total time.Duration
	batch int
	mode  string
}

func main() {
	out := flag.String("o", "timeline.png", "the PNG to write")
	in := flag.String("in", "", "draw the spans saved in this JSON file instead of running")
	save := flag.String("json", "", "also save the spans to this JSON file")
	var sw sweep
	flag.IntVar(&sw.items, "items", 64, "items of the skewed sweep")
	flag.DurationVar(&sw.total, "total", 2*time.Second, "the items' sleeps in all")
	flag.IntVar(&sw.batch, "batch", 0, "batch size (0: automatic, the default of Options)")
	flag.StringVar(&sw.mode, "mode", "hybrid", "hybrid (NewLocalDomain, Outer) or mpi-only")
	flag.Parse()

	var rec *record
	if *in != "" {
		b, err := os.ReadFile(*in)
		if err == nil {
			rec = new(record)
			err = json.Unmarshal(b, rec)
		}
		if err != nil {
			fail(err)
		}
	} else {
		var err error
		if rec, err = run(sw); err != nil {
			fail(err)
		}
		if rec == nil {
			return // not rank 0
		}
	}
	if *save != "" {
		b, err := json.MarshalIndent(rec, "", " ")
		if err == nil {
			err = os.WriteFile(*save, b, 0o644)
		}
		if err != nil {
			fail(err)
		}
	}
	if err := drawTimeline(rec, *out); err != nil {
		fail(err)
	}
	fmt.Printf("timeline: %d batches on %d ranks, wall %v: wrote %s\n", len(rec.Spans), len(rec.Slots), rec.Wall.Round(time.Millisecond), *out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "timeline:", err)
	os.Exit(1)
}
