//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// streamProbe is the root's record of one PmapStream call: a lazy
// sequence of 0..n-1 (stopping by itself after stopAt items when
// stopAt >= 0) that, before yielding each item, checks the window bound
// against the sink's own count (items yielded − sink calls ≤ window, an
// upper bound of what the root holds), and a sink that records the
// positions and values it gets.
type streamProbe struct {
	n, stopAt, window int
	slack             int // items that leave the window without a sink call (failed ones)
	yielded, sunk     atomic.Int64
	overWindow        atomic.Int64 // the largest excess over the window seen (0: none)
	got               []int
	vals              []int
	sinkErrAt         int // the sink fails at this position (-1: never)
	sinkHook          func(i int)
}

var errSinkRefused = errors.New("sink refused")

func newStreamProbe(n, window int) *streamProbe {
	return &streamProbe{n: n, stopAt: -1, window: window, sinkErrAt: -1}
}

func (p *streamProbe) seq(yield func(int) bool) {
	for i := range p.n {
		if i == p.stopAt {
			return
		}
		if ex := p.yielded.Load() + 1 - p.sunk.Load() - int64(p.window+p.slack); ex > p.overWindow.Load() {
			p.overWindow.Store(ex)
		}
		p.yielded.Add(1)
		if !yield(i) {
			return
		}
	}
}

func (p *streamProbe) sink(i int, u int) error {
	if p.sinkHook != nil {
		p.sinkHook(i)
	}
	if i == p.sinkErrAt {
		return fmt.Errorf("%w %d", errSinkRefused, i)
	}
	p.got = append(p.got, i)
	p.vals = append(p.vals, u)
	p.sunk.Add(1)
	return nil
}

// streamOn runs PmapStream with p on the root (None elsewhere).
func (e *rankEnv) streamOn(ctx context.Context, m execMode, opts Options, p *streamProbe, f func(context.Context, int) (int, error)) error {
	items := None[iter.Seq[int]]()
	var sink func(int, int) error
	if e.rank == 0 {
		items, sink = Some(iter.Seq[int](p.seq)), p.sink
	}
	return PmapStream(ctx, e.world, m.d, opts, items, f, sink)
}

// checkStream checks, on the root, that the sink got exactly the items
// want (in input order unless unordered), each with value sq(i), and that
// the window bound held.
func (e *rankEnv) checkStream(what string, p *streamProbe, want []int, unordered bool) {
	e.t.Helper()
	if e.rank != 0 {
		return
	}
	got := slices.Clone(p.got)
	if unordered {
		slices.Sort(got)
	}
	if !slices.Equal(got, want) {
		e.t.Errorf("%s: sink got %d items %v, want %d items %v", what, len(p.got), head(p.got), len(want), head(want))
	}
	for k, i := range p.got {
		if p.vals[k] != i*i {
			e.t.Errorf("%s: item %d got %d, want %d", what, i, p.vals[k], i*i)
			break
		}
	}
	if ex := p.overWindow.Load(); ex > 0 {
		e.t.Errorf("%s: %d items beyond the window of %d read ahead of the sink", what, ex, p.window)
	}
}

func head(v []int) []int { return v[:min(len(v), 12)] }

func seqUpTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func square(_ context.Context, x int) (int, error) { return x * x, nil }

// TestPmapStreamMPI checks PmapStream's results over every executor, both
// orders, both policies, automatic and fixed batches and a small window:
// each item once, through the sink in input order (or all of them,
// unordered), never more than the window read ahead of the sink; a
// sequence that stops by itself and an empty one; Progress.Total -1 until
// the input ends.
func TestPmapStreamMPI(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapStreamMPI")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	for _, m := range e.modes() {
		for _, c := range []struct {
			batch, window int
			unordered     bool
			policy        ErrorPolicy
		}{{0, 0, false, FailFast}, {0, 7, true, FailFast}, {3, 5, false, CollectAll}, {0, 16, true, CollectAll}, {1, 4, false, FailFast}} {
			what := fmt.Sprintf("%s batch=%d window=%d unordered=%v %v", m.name, c.batch, c.window, c.unordered, c.policy)
			p := newStreamProbe(200, max(c.window, c.batch, 1))
			if c.window == 0 {
				p.window = DefaultWindow
			}
			var totals []int
			opts := Options{BatchSize: c.batch, Mode: m.mode, Window: c.window, Unordered: c.unordered, OnError: c.policy,
				OnProgress: func(pr Progress) { totals = append(totals, pr.Total) }, ProgressEvery: time.Millisecond}
			slow := func(ctx context.Context, x int) (int, error) {
				if x%17 == 0 {
					time.Sleep(time.Millisecond) // some items outlast others
				}
				return x * x, nil
			}
			if err := e.streamOn(ctx, m, opts, p, slow); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			e.checkStream(what, p, seqUpTo(200), c.unordered)
			if e.rank == 0 && (len(totals) == 0 || totals[len(totals)-1] != 200 || slices.ContainsFunc(totals, func(n int) bool { return n != -1 && n != 200 })) {
				t.Errorf("%s: Progress.Total went %v, want -1 then 200", what, totals)
			}
		}
		for _, n := range []int{0, 1} {
			p := newStreamProbe(n, DefaultWindow)
			if err := e.streamOn(ctx, m, Options{Mode: m.mode}, p, square); err != nil {
				t.Errorf("%s %d items: %v", m.name, n, err)
			}
			e.checkStream(fmt.Sprintf("%s %d items", m.name, n), p, seqUpTo(n), false)
		}
		p := newStreamProbe(1000, 8)
		p.stopAt = 37
		if err := e.streamOn(ctx, m, Options{Mode: m.mode, Window: 8}, p, square); err != nil {
			t.Errorf("%s stops at 37: %v", m.name, err)
		}
		e.checkStream(m.name+" stops at 37", p, seqUpTo(37), false)
	}
	e.checkReusable("after the streams")
}

// TestPmapStreamErrors checks a stream's failures: a failing item under
// FailFast (the sink got a prefix below it) and CollectAll (every other
// item through the sink, the failed one listed), a sink error under both
// policies (Index that item, Rank the root, on every rank), a context
// cancelled mid-stream, each followed by a usable communicator.
func TestPmapStreamErrors(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapStreamErrors", 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	failing := func(_ context.Context, x int) (int, error) {
		if x == 57 {
			return 0, fmt.Errorf("item %d failed", x)
		}
		return x * x, nil
	}
	for _, m := range []execMode{e.modes()[0], e.modes()[2]} {
		for _, unordered := range []bool{false, true} {
			what := fmt.Sprintf("%s unordered=%v", m.name, unordered)
			p := newStreamProbe(150, 10)
			err := e.streamOn(ctx, m, Options{Mode: m.mode, Window: 10, Unordered: unordered}, p, failing)
			if pe := e.sameError(what+" FailFast", err, KindUser); pe.Index != 57 {
				t.Errorf("%s FailFast: %v, want item 57", what, err)
			}
			// In input order: a prefix below 57 (unordered, items above it
			// may have completed before it failed).
			if e.rank == 0 && !unordered && (slices.ContainsFunc(p.got, func(i int) bool { return i >= 57 }) || !slices.Equal(p.got, seqUpTo(len(p.got)))) {
				t.Errorf("%s FailFast: sink got %v, want a prefix below 57", what, head(p.got))
			}
			e.checkReusable(what + " FailFast")

			p = newStreamProbe(150, 10)
			p.slack = 1 // item 57 leaves the window without a sink call
			err = e.streamOn(ctx, m, Options{Mode: m.mode, Window: 10, Unordered: unordered, OnError: CollectAll}, p, failing)
			pe := e.sameError(what+" CollectAll", err, KindUser)
			if pe.Index != 57 || len(pe.Failures) != 1 || pe.Failures[0].Index != 57 {
				t.Errorf("%s CollectAll: %v (failures %v), want item 57 alone", what, err, pe.Failures)
			}
			e.checkStream(what+" CollectAll", p, slices.Delete(seqUpTo(150), 57, 58), unordered)
			e.checkReusable(what + " CollectAll")

			for _, pol := range []ErrorPolicy{FailFast, CollectAll} {
				p = newStreamProbe(150, 10)
				p.sinkErrAt = 44
				err = e.streamOn(ctx, m, Options{Mode: m.mode, Window: 10, Unordered: unordered, OnError: pol}, p, square)
				pe = e.sameError(fmt.Sprintf("%s sink error %v", what, pol), err, KindUser)
				if pe.Index != 44 || pe.Rank != 0 || (e.rank == 0 && !errors.Is(err, errSinkRefused)) {
					t.Errorf("%s sink error %v: %v (Index %d, Rank %d), want item 44 on the root", what, pol, err, pe.Index, pe.Rank)
				}
				e.checkReusable(fmt.Sprintf("%s sink error %v", what, pol))
			}

			cctx, cancel := context.WithCancel(ctx)
			p = newStreamProbe(1<<30, 10)
			p.sinkHook = func(int) {
				if len(p.got) == 30 { // the 31st sink call cancels
					cancel()
				}
			}
			err = e.streamOn(cctx, m, Options{Mode: m.mode, Window: 10, Unordered: unordered}, p, square)
			cancel()
			e.sameError(what+" canceled", err, KindCanceled)
			if e.rank == 0 && (p.overWindow.Load() > 0 || len(p.got) < 31 || (!unordered && !slices.Equal(p.got, seqUpTo(len(p.got))))) {
				t.Errorf("%s canceled: sink got %d items %v (%d beyond the window), want a prefix past 30 within the window", what, len(p.got), head(p.got), p.overWindow.Load())
			}
			e.checkReusable(what + " canceled")
		}
	}
}

// TestPmapStreamPanicAborts checks that a panic in the sink or in the
// sequence, both user code on the root off any slot, aborts the whole job
// with ExitPanic instead of leaving the other rank waiting.
func TestPmapStreamPanicAborts(t *testing.T) {
	if !mpitest.Child() {
		t.Run("sink", func(t *testing.T) {
			coordinatorAborts(t, "TestPmapStreamPanicAborts", "sink", "Pmap callback panicked: the sink exploded at 5")
		})
		t.Run("seq", func(t *testing.T) {
			coordinatorAborts(t, "TestPmapStreamPanicAborts", "seq", "Pmap callback panicked: the sequence exploded at 9")
		})
		return
	}
	e := newRankEnv(t)
	p := newStreamProbe(100, 10)
	switch c := os.Getenv(coordCaseEnv); c {
	case "sink":
		p.sinkHook = func(i int) {
			if i == 5 {
				panic(fmt.Sprint("the sink exploded at ", i))
			}
		}
	case "seq":
		p.stopAt = -1
		inner := p.seq
		items := None[iter.Seq[int]]()
		if e.rank == 0 {
			items = Some(iter.Seq[int](func(yield func(int) bool) {
				inner(func(x int) bool {
					if x == 9 {
						panic(fmt.Sprint("the sequence exploded at ", x))
					}
					return yield(x)
				})
			}))
		}
		var sink func(int, int) error
		if e.rank == 0 {
			sink = p.sink
		}
		_ = PmapStream(context.Background(), e.world, nil, Options{}, items, square, sink)
		t.Error("PmapStream returned after a panic in the sequence")
		return
	default:
		t.Fatalf("unknown %s %q", coordCaseEnv, c)
	}
	_ = e.streamOn(context.Background(), e.modes()[0], Options{}, p, square)
	t.Error("PmapStream returned after a panic in the sink")
}
