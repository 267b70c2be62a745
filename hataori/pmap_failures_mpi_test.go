//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// holdRoot is a callback wrapper for tests that need items to cross
// ranks: on the root each callback arrives at g and then waits for the
// call's context to end (FailFast: the failure elsewhere cancels it), for
// gateWait at most. With g as the call's task gate (gateTasks) and one
// arrival wanted per root slot (execMode.rootSlots), the root's
// coordinator sends no TASK before every root slot holds a batch: the
// root's slots hold batches among the first slots+1, whatever the order in
// which the slots and the other ranks start, and every later batch goes
// to another rank.
func holdRoot[U any](e *rankEnv, g *gate, f func(x int) (U, error)) func(context.Context, int) (U, error) {
	return func(ctx context.Context, x int) (U, error) {
		if e.rank == 0 {
			g.arrive()
			select {
			case <-ctx.Done():
				return *new(U), context.Cause(ctx)
			case <-time.After(gateWait):
				return *new(U), errors.New("the root's callback was never cancelled")
			}
		}
		return f(x)
	}
}

// checkDecodeFailure runs call, which makes one Pmap call whose item or
// result poisonV fails to decode, with a task gate g wanting one arrival
// per root slot of m (for holdRoot), and checks that every rank got the
// same KindWire error naming item poisonV and its "poisoned value"
// message (and every string of also), reported by the root when byRoot,
// else by a remote rank; then that the communicator is still usable.
func (e *rankEnv) checkDecodeFailure(what string, m execMode, byRoot bool, call func(g *gate) error, also ...string) {
	e.t.Helper()
	g := newGate(m.rootSlots())
	end := e.gateTasks(what, g)
	err := call(g)
	end()
	pe := e.sameError(what, err, KindWire)
	ok := pe.Index == poisonV && (pe.Rank == 0) == byRoot && strings.Contains(pe.Message, fmt.Sprint("poisoned value ", poisonV))
	for _, s := range also {
		ok = ok && strings.Contains(pe.Message, s)
	}
	if !ok {
		by := map[bool]string{true: "the root", false: "a remote rank"}[byRoot]
		e.t.Errorf("%s: %v (Index %d), want item %d reported by %s", what, err, pe.Index, poisonV, by)
	}
	e.checkReusable(what)
}

// TestPmapFailingIndex checks that every rank's error names the failing
// input index (PmapError.Index and the message), for a callback error and
// for results and items that fail to decode, with batch sizes 1 and 3,
// over every executor: the item itself, never its batch's first index, and
// never one of the root's items that failed only with the call's own
// cancellation.
func TestPmapFailingIndex(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapFailingIndex")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	for _, m := range e.modes() {
		for _, batch := range []int{1, 3} {
			what := fmt.Sprintf("%s batch=%d", m.name, batch)
			_, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, e.items(40), func(x int) (int, error) {
				if x == 13 {
					return 0, fmt.Errorf("boom %d", x)
				}
				return x, nil
			})
			pe := e.sameError(what+" user", err, KindUser)
			if pe.Index != 13 || !strings.Contains(err.Error(), "item 13") || pe.Message != "boom 13" {
				t.Errorf("%s: %v (Index %d), want item 13", what, err, pe.Index)
			}
			e.checkReusable(what)
			if e.size == 1 {
				continue // nothing crosses ranks
			}

			// A result that fails to decode at the root.
			e.checkDecodeFailure(what+" result decode", m, true, func(g *gate) error {
				hold := holdRoot(e, g, func(x int) (poison, error) { return poison{x}, nil })
				_, err := PmapContext(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, e.gatedItems(60),
					func(ctx context.Context, x gated) (poison, error) { return hold(ctx, int(x)) })
				return err
			}, fmt.Sprint("item ", poisonV))

			// An item that fails to decode on the rank that runs it.
			var items Maybe[[]poison]
			if e.rank == 0 {
				xs := make([]poison, 60)
				for i := range xs {
					xs[i] = poison{i}
				}
				items = Some(xs)
			}
			e.checkDecodeFailure(what+" item decode", m, false, func(g *gate) error {
				hold := holdRoot(e, g, func(x int) (int, error) { return x, nil })
				_, err := PmapContext(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, items,
					func(ctx context.Context, p poison) (int, error) { return hold(ctx, p.V) })
				return err
			})
		}
	}
	// Call-level errors have no index.
	cctx, cancel := context.WithCancel(ctx)
	if e.rank == 0 {
		cancel()
	}
	_, err := Pmap(cctx, e.world, e.dom, Options{}, e.items(3), func(x int) (int, error) { return x, nil })
	cancel()
	if pe := e.sameError("done context", err, KindPreflight); pe.Index != -1 || strings.Contains(err.Error(), "item") {
		t.Errorf("preflight: %v (Index %d), want no item", err, pe.Index)
	}
}

// TestPmapPreflightCauses checks that every preflight failure unwraps, on
// every rank, to the sentinel of the check that failed, and names the rank
// (and, for options, the fields) that disagreed.
func TestPmapPreflightCauses(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapPreflightCauses")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	last := e.size - 1
	id := func(x int) (int, error) { return x, nil }
	closed, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	done, cancel := context.WithCancel(ctx)
	cancel()
	type tc struct {
		name  string
		skip  bool
		cause error
		rank  int      // the rank that must be reported
		want  []string // substrings of the message
		call  func() error
	}
	cases := []tc{
		{"busy domain", false, ErrDomainBusy, last, []string{fmt.Sprintf("rank %d", last), "busy"}, func() error {
			if e.rank == last {
				release, err := e.dom.admit()
				if err != nil {
					t.Fatal(err)
				}
				defer release()
			}
			_, err := Pmap(ctx, e.world, e.dom, Options{Mode: Outer}, e.items(4), id)
			return err
		}},
		{"closed domain", false, ErrDomainClosed, last, []string{"closed"}, func() error {
			d := e.dom
			if e.rank == last {
				d = closed
			}
			_, err := Pmap(ctx, e.world, d, Options{}, e.items(4), id)
			return err
		}},
		{"batch size differs", e.size == 1, ErrOptionsDiffer, last, []string{fmt.Sprintf("rank %d: options differ from rank 0's: batch size 7 here, automatic on rank 0", last)}, func() error {
			opts := Options{}
			if e.rank == last && last > 0 {
				opts.BatchSize = 7
			}
			_, err := Pmap(ctx, e.world, nil, opts, e.items(4), id)
			return err
		}},
		{"policy and prefetch differ", e.size == 1, ErrOptionsDiffer, last, []string{"prefetch true here, false on rank 0", "error policy CollectAll here, FailFast on rank 0"}, func() error {
			opts := Options{}
			if e.rank == last && last > 0 {
				opts.Prefetch, opts.OnError = true, CollectAll
			}
			_, err := Pmap(ctx, e.world, nil, opts, e.items(4), id)
			return err
		}},
		{"negative batch", false, ErrInvalidOptions, 0, []string{"negative batch size"}, func() error {
			_, err := Pmap(ctx, e.world, nil, Options{BatchSize: -2}, e.items(4), id)
			return err
		}},
		{"unknown policy", false, ErrInvalidOptions, 0, []string{"unknown error policy"}, func() error {
			_, err := Pmap(ctx, e.world, nil, Options{OnError: 9}, e.items(4), id)
			return err
		}},
		{"no items on the root", false, ErrPayload, 0, []string{"no items"}, func() error {
			_, err := Pmap(ctx, e.world, nil, Options{}, None[[]int](), id)
			return err
		}},
		{"mpi-only outer", false, ErrInvalidMode, 0, []string{"needs mode Auto or Sequential"}, func() error {
			_, err := Pmap(ctx, e.world, nil, Options{Mode: Outer}, e.items(4), id)
			return err
		}},
		{"context done on the last rank", false, KindCanceled, last, []string{"context already done"}, func() error {
			c := ctx
			if e.rank == last {
				c = done
			}
			_, err := Pmap(c, e.world, e.dom, Options{}, e.items(4), id)
			return err
		}},
		{"unsupported type", false, ErrUnsupportedType, 0, []string{"cannot cross ranks"}, func() error {
			_, err := Pmap(ctx, e.world, e.dom, Options{}, e.items(4), func(x int) (any, error) { return x, nil })
			return err
		}},
	}
	for _, c := range cases {
		if c.skip {
			continue
		}
		err := c.call()
		pe := e.sameError(c.name, err, KindPreflight)
		if !errors.Is(err, c.cause) || !errors.Is(err, KindPreflight) {
			t.Errorf("%s: rank %d: %v does not match %v", c.name, e.rank, err, c.cause)
		}
		if pe.Rank != c.rank || pe.Index != -1 {
			t.Errorf("%s: reported by rank %d (Index %d), want rank %d", c.name, pe.Rank, pe.Index, c.rank)
		}
		for _, w := range c.want {
			if !strings.Contains(pe.Message, w) {
				t.Errorf("%s: message %q does not say %q", c.name, pe.Message, w)
			}
		}
		for _, other := range []error{ErrDomainBusy, ErrOptionsDiffer, ErrPayload, KindCanceled, ErrInvalidOptions} {
			if other != c.cause && errors.Is(err, other) {
				t.Errorf("%s: %v also matches %v", c.name, err, other)
			}
		}
		e.checkReusable(c.name)
	}

	// The local entry check (another goroutine than the MPI main thread)
	// keeps its cause too.
	res := make(chan error)
	go func() {
		_, err := Pmap(ctx, e.world, e.dom, Options{}, e.items(3), id)
		res <- err
	}()
	if err := <-res; !errors.Is(err, ErrNotMainThread) || !errors.Is(err, KindPreflight) {
		t.Errorf("other goroutine: %v, want ErrNotMainThread", err)
	}
}

// failureKey is what must be equal on every rank and over repeated runs in
// a CollectAll list: index, kind and message (the rank that ran an item
// depends on the schedule).
func failureKey(fs []ItemFailure) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%d/%v/%s;", f.Index, f.Kind, f.Message)
	}
	return b.String()
}

// TestPmapCollectAll checks the CollectAll policy over every executor and
// batch sizes 1 and 3: every item runs, the root gets every successful
// result, and every rank gets the same list of failures (index, kind,
// message) in index order, the same over repeated runs, whose entries
// unwrap to the callback's error on the rank that ran them. Then a result
// that fails to decode (its batch's other results are lost with it), and a
// context that ends mid-call, which stops the call but keeps the results
// that arrived.
func TestPmapCollectAll(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapCollectAll")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	const n = 50
	bad := map[int]bool{0: true, 3: true, 17: true, 18: true, 31: true, 49: true}
	errOdd := errors.New("odd item")
	for _, m := range e.modes() {
		for _, batch := range []int{1, 3} {
			what := fmt.Sprintf("%s batch=%d", m.name, batch)
			var first string
			for run := range 3 {
				var calls atomic.Int64
				out, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode, OnError: CollectAll}, e.items(n), func(x int) (int, error) {
					calls.Add(1)
					if bad[x] {
						return 0, fmt.Errorf("item %d: %w", x, errOdd)
					}
					return 10 * x, nil
				})
				if total := e.sum(calls.Load()); total != n {
					t.Errorf("%s: %d callbacks over all ranks, want %d (every item runs)", what, total, n)
				}
				pe := e.sameError(what, err, KindUser)
				if pe.Index != 0 || len(pe.Failures) != len(bad) {
					t.Errorf("%s: %v: Index %d, %d failures, want item 0 and %d", what, err, pe.Index, len(pe.Failures), len(bad))
				}
				key := failureKey(pe.Failures)
				if !e.same(hashString(key)) {
					t.Errorf("%s: the list differs between ranks: %s", what, key)
				}
				if run == 0 {
					first = key
				} else if key != first {
					t.Errorf("%s: run %d listed %s, run 0 %s", what, run, key, first)
				}
				for i, f := range pe.Failures {
					if i > 0 && f.Index <= pe.Failures[i-1].Index {
						t.Errorf("%s: failures out of order: %v", what, pe.Failures)
					}
					if !bad[f.Index] || f.Kind != KindUser || f.Message != fmt.Sprintf("item %d: odd item", f.Index) || f.Rank < 0 || f.Rank >= e.size {
						t.Errorf("%s: failure %+v", what, f)
					}
					if (f.Rank == e.rank) != errors.Is(f, errOdd) {
						t.Errorf("%s: rank %d: failure %+v reaches the callback's error: %v", what, e.rank, f, errors.Is(f, errOdd))
					}
					if !pe.Failed(f.Index) {
						t.Errorf("%s: Failed(%d) is false", what, f.Index)
					}
				}
				if pe.Failed(1) {
					t.Errorf("%s: Failed(1) is true", what)
				}
				if e.rank == 0 {
					if len(out) != n {
						t.Fatalf("%s: root got %d results", what, len(out))
					}
					for i, v := range out {
						if want := map[bool]int{false: 10 * i, true: 0}[bad[i]]; v != want {
							t.Errorf("%s: out[%d] = %d, want %d", what, i, v, want)
						}
					}
				} else if out != nil {
					t.Errorf("%s: rank %d got results", what, e.rank)
				}
			}
			// No failure: a nil error.
			out, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode, OnError: CollectAll}, e.items(n), func(x int) (int, error) { return x, nil })
			if err != nil || (e.rank == 0 && len(out) != n) {
				t.Errorf("%s: clean CollectAll call: %d results, %v", what, len(out), err)
			}
		}
	}

	if e.size > 1 {
		// Results that fail to decode on the root: the root's coordinator
		// sends no TASK before both of the root's slots hold a batch (the
		// task gate), and they hold it until the other ranks finished
		// every other item (by the progress hook's count), so the root
		// holds batches among the first three and item poisonV certainly
		// crosses ranks.
		for _, batch := range []int{1, 3} {
			what := fmt.Sprintf("result decode batch=%d", batch)
			slots := e.dom.Workers()
			others := 40 - slots*batch // the items the other ranks run
			g := newGate(slots)
			end := e.gateTasks(what, g)
			finished := make(chan struct{})
			var once sync.Once
			out, err := PmapContext(ctx, e.world, e.dom, Options{BatchSize: batch, Mode: Outer, OnError: CollectAll,
				OnProgress: func(p Progress) {
					if p.Done >= others {
						once.Do(func() { close(finished) })
					}
				}, ProgressEvery: time.Millisecond},
				e.gatedItems(40), func(_ context.Context, x gated) (poison, error) {
					if e.rank == 0 {
						g.arrive()
						select {
						case <-finished:
						case <-time.After(gateWait):
							return poison{}, fmt.Errorf("the root held item %d %v: the other ranks never finished theirs", x, gateWait)
						}
					}
					return poison{int(x)}, nil
				})
			end()
			pe := e.sameError(what, err, KindWire)
			lo, hi := poisonV, poisonV+1
			if batch == 3 {
				lo, hi = 36, 39 // the batch [36, 39)
			}
			var idx []int
			for _, f := range pe.Failures {
				idx = append(idx, f.Index)
				if f.Kind != KindWire || f.Rank != 0 {
					t.Errorf("%s: failure %+v", what, f)
				}
			}
			var want []int
			for i := lo; i < hi; i++ {
				want = append(want, i)
			}
			if !slices.Equal(idx, want) || pe.Index != poisonV {
				t.Errorf("%s: Index %d, failures %v, want %d and %v", what, pe.Index, idx, poisonV, want)
			}
			for _, f := range pe.Failures {
				if f.Index != poisonV && !strings.Contains(f.Message, fmt.Sprintf("item %d of the same RESULT failed to decode", poisonV)) {
					t.Errorf("%s: collateral failure %+v does not name item %d", what, f, poisonV)
				}
			}
			if e.rank == 0 {
				for i, v := range out {
					if (i < lo || i >= hi) && v.V != i {
						t.Errorf("%s: out[%d] = %v", what, i, v)
					}
				}
			}
			e.checkReusable(what)
		}
	}

	// The root's context ends mid-call: the call stops, the root keeps
	// what finished, and every item without a result is listed. The root
	// cancels in its 10th callback, before its coordinator has sent any
	// TASK (the task gate opens right after), so the other ranks run at
	// most the batches of the first deal, one per slot, and stop them
	// between items once the call is stopping: many items never run. The
	// root's callbacks that start after the cancellation fail with it, and
	// the items a running batch skipped are stopped items too (listed with
	// the rank that skipped them), so however far each slot gets before
	// the call stops, no item is left both unlisted and without a result.
	const total = 200
	cctx, cancel := context.WithCancel(ctx)
	g := newGate(1)
	end := e.gateTasks("canceled", g)
	var rootRuns atomic.Int64
	out, err := PmapContext(cctx, e.world, nil, Options{OnError: CollectAll}, e.gatedItems(total), func(ctx context.Context, x gated) (int, error) {
		if e.rank == 0 {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if rootRuns.Add(1) == 10 {
				cancel()
				g.open()
			}
		}
		return int(x) + 1, nil
	})
	end()
	cancel()
	pe := e.sameError("canceled", err, KindCanceled)
	if !e.same(hashString(failureKey(pe.Failures))) || len(pe.Failures) == 0 || pe.Index != -1 {
		t.Errorf("canceled: %v with %d failures", err, len(pe.Failures))
	}
	for _, f := range pe.Failures {
		neverRan := f.Rank == -1 && strings.Contains(f.Message, "no result")
		stopped := f.Rank >= 0 && f.Rank < e.size && strings.Contains(f.Message, "stopped by the call's cancellation")
		if f.Kind != KindCanceled || !neverRan && !stopped {
			t.Errorf("canceled: failure %+v", f)
			break
		}
	}
	if e.rank == 0 {
		got := 0
		for i, v := range out {
			if !pe.Failed(i) {
				got++
				if v != i+1 {
					t.Errorf("canceled: out[%d] = %d", i, v)
				}
			}
		}
		if got+len(pe.Failures) != total || got == 0 {
			t.Errorf("canceled: %d results and %d failures for %d items", got, len(pe.Failures), total)
		}
	}
	e.checkReusable("canceled")
}

// TestPmapCallContext checks that a callback's context is cancelled on
// every rank, within a bounded time, when an item fails on some rank, when
// the root's context ends and when another rank's context ends; the
// callbacks that returned because of it never win the convergence.
func TestPmapCallContext(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapCallContext")
		return
	}
	e := newRankEnv(t)
	const bound = 5 * time.Second // against callbacks that would wait 30 s
	last := e.size - 1
	for _, m := range e.modes() {
		for _, trigger := range []string{"item", "root context", "last rank's context"} {
			what := m.name + " " + trigger
			ctx, cancel := context.WithCancel(context.Background())
			var waited, stopped atomic.Int64
			var firstLast atomic.Bool
			var mu sync.Mutex
			var causes []string
			// No TASK leaves the root before each of its slots waits in a
			// callback, so some callback waits whichever rank the trigger
			// is on and however late the root's slots start.
			g := newGate(m.rootSlots())
			end := e.gateTasks(what, g)
			start := time.Now()
			_, err := PmapContext(ctx, e.world, m.d, Options{Mode: m.mode}, e.gatedItems(8*e.size), func(cctx context.Context, x gated) (int, error) {
				switch {
				case trigger == "item" && e.rank == last && firstLast.CompareAndSwap(false, true):
					time.Sleep(20 * time.Millisecond)
					return 0, fmt.Errorf("item %d failed on rank %d", x, e.rank)
				case trigger == "root context" && e.rank == 0,
					trigger == "last rank's context" && e.rank == last:
					time.AfterFunc(20*time.Millisecond, cancel)
				}
				waited.Add(1)
				if e.rank == 0 {
					g.arrive()
				}
				select {
				case <-cctx.Done():
					stopped.Add(1)
					mu.Lock()
					causes = append(causes, fmt.Sprint(context.Cause(cctx)))
					mu.Unlock()
					return 0, cctx.Err()
				case <-time.After(30 * time.Second):
					return int(x), nil
				}
			})
			el := time.Since(start)
			end()
			cancel()
			switch trigger {
			case "item":
				pe := e.sameError(what, err, KindUser)
				if pe.Rank != last || pe.Message != fmt.Sprintf("item %d failed on rank %d", pe.Index, last) {
					t.Errorf("%s: %v, want rank %d's failing item (not a stopped item)", what, err, last)
				}
			default:
				pe := e.sameError(what, err, KindCanceled)
				want := 0
				if trigger != "root context" {
					want = last
				}
				if pe.Rank != want || pe.Index != -1 {
					t.Errorf("%s: %v, want the cancellation of rank %d", what, err, want)
				}
			}
			if el > bound {
				t.Errorf("%s: rank %d: the call took %v, want < %v", what, e.rank, el, bound)
			}
			if stopped.Load() != waited.Load() {
				t.Errorf("%s: rank %d: %d of %d waiting callbacks saw their context end", what, e.rank, stopped.Load(), waited.Load())
			}
			for _, c := range causes {
				ownCtx := (trigger == "root context" && e.rank == 0) || (trigger == "last rank's context" && e.rank == last)
				if c != ErrStopped.Error() && !(ownCtx && c == context.Canceled.Error()) {
					t.Errorf("%s: rank %d: context.Cause %q, want ErrStopped", what, e.rank, c)
				}
			}
			if total := e.sum(waited.Load()); total == 0 && (e.size > 1 || m.mode == Outer || trigger != "item") {
				t.Errorf("%s: no callback waited", what)
			}
			e.checkReusable(what)
		}
	}
}

// goroutineID returns the calling goroutine's id, from its stack header.
func goroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return ""
	}
	return f[1]
}

// TestPmapProgressHook checks that OnProgress is called on the root's
// coordinator only (the goroutine that called Pmap), never on another
// rank, with counts that grow, the right total, and a last call at the
// total; and that it reports failures under CollectAll.
func TestPmapProgressHook(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapProgressHook")
		return
	}
	e := newRankEnv(t)
	me := goroutineID()
	for _, m := range e.modes() {
		for _, policy := range []ErrorPolicy{FailFast, CollectAll} {
			what := fmt.Sprintf("%s %v", m.name, policy)
			const n = 40
			var reports []Progress
			var foreign atomic.Int64
			// The root's callbacks wait for a first report (all but the
			// first one at world size one, where only the root computes),
			// and no TASK leaves the root before each of its slots waits
			// in one: so the call cannot end before a report, and there is
			// a final one besides, however the items spread over the ranks.
			g := newGate(m.rootSlots())
			end := e.gateTasks(what, g)
			reported := make(chan struct{})
			var once sync.Once
			var rootCalls atomic.Int64
			_, err := Pmap(context.Background(), e.world, m.d, Options{Mode: m.mode, OnError: policy, ProgressEvery: 5 * time.Millisecond,
				OnProgress: func(p Progress) {
					if goroutineID() != me || onWorker() {
						foreign.Add(1)
					}
					reports = append(reports, p)
					once.Do(func() { close(reported) })
				}}, e.gatedItems(n), func(x gated) (int, error) {
				if e.rank == 0 {
					g.arrive()
					if rootCalls.Add(1) > 1 || e.size > 1 {
						select {
						case <-reported:
						case <-time.After(gateWait):
							return 0, fmt.Errorf("no progress report while the root held item %d", x)
						}
					}
				}
				time.Sleep(3 * time.Millisecond)
				if policy == CollectAll && x%10 == 0 {
					return 0, errors.New("tenth")
				}
				return int(x), nil
			})
			end()
			if policy == FailFast && err != nil || policy == CollectAll && err == nil {
				t.Errorf("%s: %v", what, err)
			}
			if foreign.Load() != 0 {
				t.Errorf("%s: %d progress calls off the coordinator", what, foreign.Load())
			}
			if e.rank != 0 {
				if len(reports) != 0 {
					t.Errorf("%s: rank %d: %d progress calls on a non-root rank", what, e.rank, len(reports))
				}
				continue
			}
			if len(reports) < 2 {
				t.Errorf("%s: %d progress calls, want several", what, len(reports))
				continue
			}
			for i, p := range reports {
				if p.Total != n || p.Done < 0 || p.Done > n || (i > 0 && (p.Done < reports[i-1].Done || p.Elapsed < reports[i-1].Elapsed)) {
					t.Errorf("%s: report %d: %+v after %+v", what, i, p, reports[max(i-1, 0)])
				}
			}
			final := reports[len(reports)-1]
			wantFailed := 0
			if policy == CollectAll {
				wantFailed = n / 10
			}
			if final.Done != n || final.Failed != wantFailed {
				t.Errorf("%s: final report %+v, want %d done, %d failed", what, final, n, wantFailed)
			}
		}
	}
}

// TestPmapCallStats checks Options.Stats on the root: items and batches
// per rank and slot that add up, busy and idle times that add up to each
// rank's call and cover the callbacks' work, bytes each way for every rank
// that ran a batch, with RecordSpans one span per batch, and batch size
// summaries per slot: exactly the fixed size B (n is a multiple of it),
// and for automatic sizes (batch 0) ones that add up.
func TestPmapCallStats(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapCallStats")
		return
	}
	e := newRankEnv(t)
	const n = 48
	const work = 3 * time.Millisecond
	for _, m := range e.modes() {
		for _, prefetch := range []bool{false, true} {
			for _, batch := range []int{0, 1, 4} {
				what := fmt.Sprintf("%s prefetch=%v batch=%d", m.name, prefetch, batch)
				st := CallStats{RecordSpans: batch == 4}
				_, err := Pmap(context.Background(), e.world, m.d, Options{Mode: m.mode, BatchSize: batch, Prefetch: prefetch, Stats: &st}, e.items(n), func(x int) (int, error) {
					time.Sleep(work)
					return x, nil
				})
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if e.rank != 0 {
					if st.Items != nil || st.Wall != 0 {
						t.Errorf("%s: rank %d's Stats were filled", what, e.rank)
					}
					continue
				}
				if len(st.Items) != e.size || len(st.Busy) != e.size || len(st.SentBytes) != e.size || len(st.RecvBytes) != e.size {
					t.Fatalf("%s: stats of the wrong shape: %+v", what, st)
				}
				var items, batches int64
				var busy time.Duration
				for r := range e.size {
					ran := int64(0)
					for s := range st.Items[r] {
						items += st.Items[r][s]
						batches += st.Batches[r][s]
						ran += st.Items[r][s]
						if st.Busy[r][s] < 0 || st.Idle[r][s] < 0 || st.Busy[r][s] > st.Wall+time.Second {
							t.Errorf("%s: rank %d slot %d: busy %v idle %v of wall %v", what, r, s, st.Busy[r][s], st.Idle[r][s], st.Wall)
						}
						busy += st.Busy[r][s]
						if r == 0 && st.Busy[r][s]+st.Idle[r][s] != st.Wall {
							t.Errorf("%s: root slot %d: busy %v + idle %v != wall %v", what, s, st.Busy[r][s], st.Idle[r][s], st.Wall)
						}
					}
					if len(st.Busy[r]) != len(st.Items[r]) || len(st.Sizes[r]) != len(st.Items[r]) {
						t.Errorf("%s: rank %d: %d busy slots, %d size slots, %d item slots", what, r, len(st.Busy[r]), len(st.Sizes[r]), len(st.Items[r]))
						continue
					}
					for s, z := range st.Sizes[r] {
						b := st.Batches[r][s]
						switch {
						case z.Batches != b:
							t.Errorf("%s: rank %d slot %d: sizes of %d batches, ran %d", what, r, s, z.Batches, b)
						case b == 0 && z != BatchSizes{}:
							t.Errorf("%s: rank %d slot %d: sizes %+v without a batch", what, r, s, z)
						case b > 0 && batch > 0 && (z.Min != batch || z.Median != batch || z.Max != batch):
							t.Errorf("%s: rank %d slot %d: sizes %+v, want every batch of %d", what, r, s, z, batch)
						case b > 0 && (z.Min < 1 || z.Min > z.Median || z.Median > z.Max || int64(z.Min)*b > st.Items[r][s] || int64(z.Max)+(b-1) > st.Items[r][s]):
							t.Errorf("%s: rank %d slot %d: sizes %+v for %d items in %d batches", what, r, s, z, st.Items[r][s], b)
						}
					}
					if r == 0 && (st.SentBytes[0] != 0 || st.RecvBytes[0] != 0) {
						t.Errorf("%s: the root counted %d/%d bytes to itself", what, st.SentBytes[0], st.RecvBytes[0])
					}
					if r != 0 && (st.RecvBytes[r] == 0 || st.SentBytes[r] == 0) {
						t.Errorf("%s: rank %d: %d bytes sent, %d received", what, r, st.SentBytes[r], st.RecvBytes[r])
					}
					if r != 0 && ran > 0 && st.SentBytes[r] < ran*8 {
						t.Errorf("%s: rank %d ran %d items but got %d bytes", what, r, ran, st.SentBytes[r])
					}
				}
				if batch == 0 && (items != n || batches < 1 || batches > n) {
					t.Errorf("%s: %d items in %d batches, want %d", what, items, batches, n)
				}
				if want := int64((n + max(batch, 1) - 1) / max(batch, 1)); batch > 0 && (items != n || batches != want) {
					t.Errorf("%s: %d items in %d batches, want %d in %d", what, items, batches, n, want)
				}
				// Inner and Sequential slots run one item at a time; the
				// callbacks' sleeps are part of some slot's busy time.
				if busy < n*work*9/10 {
					t.Errorf("%s: %v busy in all, want at least %v", what, busy, n*work*9/10)
				}
				if !st.RecordSpans {
					if st.Spans != nil {
						t.Errorf("%s: spans without RecordSpans", what)
					}
					continue
				}
				if int64(len(st.Spans)) != batches {
					t.Errorf("%s: %d spans for %d batches", what, len(st.Spans), batches)
				}
				covered := 0
				for _, sp := range st.Spans {
					covered += sp.Count
					if sp.End < sp.Begin || sp.Begin < 0 || sp.Rank < 0 || sp.Rank >= e.size || sp.Slot < 0 || sp.Slot >= len(st.Items[sp.Rank]) || sp.End-sp.Begin < time.Duration(sp.Count)*work*9/10 {
						t.Errorf("%s: span %+v", what, sp)
					}
				}
				if covered != n {
					t.Errorf("%s: spans cover %d items", what, covered)
				}
			}
		}
	}
}
