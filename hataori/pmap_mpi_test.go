//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/hataori/hataori-go/internal/sched"
)

// TestPmapMPI checks scheduling, ordering and exactly-once execution over
// every executor, empty input, more ranks than items, batch sizes 1 and 3,
// and that world size one moves nothing through the codec.
func TestPmapMPI(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapMPI")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	for _, m := range e.modes() {
		for _, n := range []int{0, 1, e.size - 1, 37} {
			for _, batch := range []int{0, 1, 3, 100} {
				what := fmt.Sprintf("%s n=%d batch=%d", m.name, n, batch)
				var calls atomic.Int64
				enc0, dec0 := wire.Counts()
				var out []int
				var err error
				var stats *sched.Stats
				pmapRootStats = func(s sched.Stats) { stats = &s }
				evs := traceEvents(func() {
					out, err = Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, e.items(n), func(x int) (int, error) {
						calls.Add(1)
						return x*x + 1, nil
					})
				})
				pmapRootStats = nil
				if err != nil {
					t.Errorf("%s: rank %d: %v", what, e.rank, err)
					continue
				}
				if traceOn && (e.rank == 0) != (stats != nil) { // reported under hataoridebug only
					t.Errorf("%s: rank %d: root statistics reported %v", what, e.rank, stats != nil)
				}
				if stats != nil {
					st := *stats
					if st.Results != st.Assigned || len(st.Stops) != e.size {
						t.Errorf("%s: instrumentation %+v", what, st)
					}
					for r := range e.size {
						for s, stops := range st.Stops[r] {
							if stops != 1 {
								t.Errorf("%s: rank %d slot %d saw %d STOP", what, r, s, stops)
							}
						}
						if st.Drains[r] != 1 {
							t.Errorf("%s: rank %d saw %d DRAIN", what, r, st.Drains[r])
						}
					}
					// Batch 0 is automatic (it meant 1 before): between one
					// batch and one per item.
					if batch == 0 && (st.Assigned > int64(n) || (n > 0) != (st.Assigned > 0)) {
						t.Errorf("%s: %d automatic batches assigned for %d items", what, st.Assigned, n)
					}
					if wantBatches := (n + max(batch, 1) - 1) / max(batch, 1); batch > 0 && st.Assigned != int64(wantBatches) {
						t.Errorf("%s: %d batches assigned, want %d", what, st.Assigned, wantBatches)
					}
				}
				if total := e.sum(calls.Load()); total != int64(n) {
					t.Errorf("%s: %d callback calls over all ranks, want %d", what, total, n)
				}
				if e.rank == 0 {
					if out == nil || len(out) != n {
						t.Errorf("%s: root got %d results (nil %v), want %d", what, len(out), out == nil, n)
					}
					for i, v := range out {
						if v != i*i+1 {
							t.Errorf("%s: result %d = %d", what, i, v)
							break
						}
					}
				} else if out != nil {
					t.Errorf("%s: rank %d got results %v", what, e.rank, out)
				}
				if e.size == 1 {
					if enc, dec := wire.Counts(); wire.Counting && (enc != enc0 || dec != dec0) {
						t.Errorf("%s: world size one used the codec (%d encodes, %d decodes)", what, enc-enc0, dec-dec0)
					}
					if c := countPrefix(evs, "send"); c != 0 {
						t.Errorf("%s: world size one sent %d frames", what, c)
					}
				}
			}
		}
	}
	// Results keep input order when items finish in reverse order.
	const n = 12
	out, err := Pmap(ctx, e.world, e.dom, Options{BatchSize: 4, Mode: Outer}, e.items(n), func(x int) (string, error) {
		time.Sleep(time.Duration(n-x) * time.Millisecond)
		return fmt.Sprint("r", x), nil
	})
	if err != nil {
		t.Fatalf("reverse completion: %v", err)
	}
	if e.rank == 0 {
		for i, s := range out {
			if s != fmt.Sprint("r", i) {
				t.Errorf("reverse completion: out[%d] = %q", i, s)
			}
		}
	}
}

// TestPmapErrors checks that user errors on one or several ranks, a result
// that fails to decode and a cancelled context give the identical error on
// every rank, and that the communicator is reusable afterwards.
func TestPmapErrors(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestPmapErrors")
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	for _, m := range e.modes() {
		for _, batch := range []int{1, 3} {
			what := fmt.Sprintf("%s batch=%d", m.name, batch)
			// One failing item.
			_, err := Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, e.items(20), func(x int) (int, error) {
				if x == 6 {
					return 0, fmt.Errorf("boom %d", x)
				}
				return x, nil
			})
			pe := e.sameError(what+" one error", err, KindUser)
			if pe.Message != "boom 6" || pe.Key/int64(e.size)/3 != 6 || pe.Key/int64(e.size)%3 != 1 {
				t.Errorf("%s: error %v, want task 6 class 1 \"boom 6\"", what, pe)
			}
			if (pe.Rank == e.rank) != (errors.Unwrap(err) != nil) {
				t.Errorf("%s: rank %d: original error reachable=%v but reporting rank is %d", what, e.rank, errors.Unwrap(err) != nil, pe.Rank)
			}
			e.checkReusable(what)

			// Several failing items running at once on several ranks: the
			// lowest index always wins (FIFO assignment).
			_, err = Pmap(ctx, e.world, m.d, Options{BatchSize: batch, Mode: m.mode}, e.items(30), func(x int) (int, error) {
				if x >= 2 {
					time.Sleep(2 * time.Millisecond)
					return 0, fmt.Errorf("boom %d", x)
				}
				return x, nil
			})
			pe = e.sameError(what+" many errors", err, KindUser)
			if pe.Message != "boom 2" {
				t.Errorf("%s: winner %v, want \"boom 2\"", what, pe)
			}
			e.checkReusable(what)
		}
	}
	// A 10 KB non-ASCII message (every item fails with it): every rank
	// gets the same message, cut to 4096 bytes at a character boundary
	// (2-byte characters: exactly 4096 bytes survive).
	long := strings.Repeat("é", 5000)
	_, err := Pmap(ctx, e.world, nil, Options{}, e.items(4*e.size), func(x int) (int, error) {
		return 0, errors.New(long)
	})
	if pe := e.sameError("long message", err, KindUser); pe.Message != errmsg.Bound(long) || len(pe.Message) != errmsg.Max || !utf8.ValidString(pe.Message) {
		t.Errorf("long message: got %d bytes (valid UTF-8 %v), want the %d-byte bounded prefix",
			len(pe.Message), utf8.ValidString(pe.Message), len(errmsg.Bound(long)))
	}
	e.checkReusable("long message")

	// A cancelled context on one rank during the call.
	cctx, cancel := context.WithCancel(ctx)
	_, err = Pmap(cctx, e.world, e.dom, Options{Mode: Sequential}, e.items(40), func(x int) (int, error) {
		if x == 3 {
			cancel()
		}
		time.Sleep(time.Millisecond)
		return x, nil
	})
	cancel()
	pe := e.sameError("cancel", err, KindCanceled)
	if !errors.Is(err, KindCanceled) {
		t.Errorf("cancel: %v does not match KindCanceled", err)
	}
	if pe.Rank == e.rank && !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: reporting rank's error %v does not wrap context.Canceled", err)
	}
	e.checkReusable("cancel")
}

// TestPmapWire checks that results that fail to decode at the root, and
// items that fail to decode at a remote rank, converge to one KindWire
// error on every rank.
func TestPmapWire(t *testing.T) {
	needTrace(t)
	if !mpitest.Child() {
		pmapJob(t, "TestPmapWire", 2, 4)
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	// The root's own items block until a remote RESULT has arrived, so a
	// result certainly crosses the wire.
	got := make(chan struct{})
	var once sync.Once
	pmapTrace = func(ev string) {
		if strings.HasPrefix(ev, "recv-result") {
			once.Do(func() { close(got) })
		}
	}
	_, err := Pmap(ctx, e.world, e.dom, Options{Mode: Sequential}, e.items(8), func(x int) (poison, error) {
		if e.rank == 0 {
			select {
			case <-got:
			case <-time.After(20 * time.Second):
				return poison{}, errors.New("no remote result arrived")
			}
		}
		return poison{V: poisonV}, nil // no result of a remote rank decodes
	})
	pmapTrace = nil
	pe := e.sameError("result decode", err, KindWire)
	if pe.Rank != 0 || !strings.Contains(pe.Message, "poisoned value") {
		t.Errorf("result decode: %v, want a decode error reported by the root", pe)
	}
	e.checkReusable("result decode")

	// Items that cannot be decoded by the remote ranks.
	var items Maybe[[]poison]
	if e.rank == 0 {
		items = Some([]poison{{poisonV}, {poisonV}, {poisonV}, {poisonV}, {poisonV}, {poisonV}})
	}
	got2 := make(chan struct{})
	var once2 sync.Once
	pmapTrace = func(ev string) {
		if strings.HasPrefix(ev, "recv-result") {
			once2.Do(func() { close(got2) })
		}
	}
	_, err = Pmap(ctx, e.world, e.dom, Options{Mode: Sequential}, items, func(p poison) (int, error) {
		if e.rank == 0 {
			select {
			case <-got2:
			case <-time.After(20 * time.Second):
				return 0, errors.New("no remote result arrived")
			}
		}
		return p.V, nil
	})
	pmapTrace = nil
	pe = e.sameError("item decode", err, KindWire)
	if pe.Rank == 0 || !strings.Contains(pe.Message, "poisoned value") {
		t.Errorf("item decode: %v, want a decode error reported by a remote rank", pe)
	}
	e.checkReusable("item decode")
}
