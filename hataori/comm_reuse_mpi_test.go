//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestCommReuseIsolation checks that a reused private communicator never
// delivers a frame of an earlier call to a later one: on World and on a
// Comm from Dup, calls ended by a callback error on a remote rank, by a
// cancelled context, by an item and by a result that fail to decode, each
// followed by normal Pmap calls with other batch sizes whose every result
// carries its call's number (a RESULT or DRAIN of an earlier call would
// give a wrong value, a wrong count or a protocol fault), and by the data
// collectives. Under hataoridebug it also checks, through coll's debug
// hook, that the duplicate is really reused (same handle, no new
// duplicate) after a clean end and after item failures and
// cancellations, replaced after a wire fault, and freed by Comm.Free and
// Finalize, and that Dup makes the new communicator's duplicate at once.
func TestCommReuseIsolation(t *testing.T) {
	if !mpitest.Child() {
		pmapJob(t, "TestCommReuseIsolation", 2, 4)
		return
	}
	e := newRankEnv(t)
	dup, err := e.world.Dup()
	if err != nil {
		t.Fatal(err)
	}
	m := execMode{"outer", e.dom, Outer}
	serial := 0
	for _, parent := range []struct {
		name string
		c    Comm
	}{{"world", e.world}, {"dup", dup}} {
		p := *e
		p.world = parent.c
		calls := 0 // on this parent: the first follows calls on another
		normal := func(what string, wantReuse bool) {
			t.Helper()
			for _, batch := range []int{1, 4, 7} {
				serial++
				n := serial
				before, dbg := coll.DebugOpens()
				// A stale CANCEL would cancel ctx: the item then fails.
				out, err := PmapContext(context.Background(), p.world, nil, Options{BatchSize: batch}, p.items(53), func(ctx context.Context, x int) (int, error) {
					if err := ctx.Err(); err != nil {
						return 0, fmt.Errorf("item %d of call %d: a CANCEL of an earlier call: %w", x, n, err)
					}
					return x*1000 + n, nil
				})
				after, _ := coll.DebugOpens()
				if err != nil {
					t.Fatalf("%s %s batch %d: %v", parent.name, what, batch, err)
				}
				if p.rank == 0 {
					for i, v := range out {
						if v != i*1000+n {
							t.Fatalf("%s %s batch %d: result %d is %d, want %d", parent.name, what, batch, i, v, i*1000+n)
						}
					}
					if len(out) != 53 {
						t.Fatalf("%s %s batch %d: %d results", parent.name, what, batch, len(out))
					}
				}
				if dbg && wantReuse && (after.Reuses != before.Reuses+1 || after.Dups != before.Dups || (calls > 0 && after.Last != before.Last)) {
					t.Errorf("%s %s batch %d: not reused: before %+v after %+v", parent.name, what, batch, before, after)
				}
				wantReuse = true // from the second normal call on, always
				calls++
			}
			// The data collectives on the same kept duplicate.
			var bv Maybe[[]int]
			var sv Maybe[[]string]
			if p.rank == 0 {
				bv = Some([]int{serial, 1, 2})
				shards := make([]string, p.size)
				for i := range shards {
					shards[i] = fmt.Sprint("shard ", i, " of ", serial)
				}
				sv = Some(shards)
			}
			got, err := Broadcast(context.Background(), p.world, 0, bv)
			if err != nil || !slices.Equal(got, []int{serial, 1, 2}) {
				t.Fatalf("%s %s: Broadcast %v %v", parent.name, what, got, err)
			}
			s, err := Scatter(context.Background(), p.world, 0, sv)
			if err != nil || s != fmt.Sprint("shard ", p.rank, " of ", serial) {
				t.Fatalf("%s %s: Scatter %q %v", parent.name, what, s, err)
			}
			all, err := Gather(context.Background(), p.world, 0, p.rank+serial)
			if err != nil || (p.rank == 0 && len(all) != p.size) {
				t.Fatalf("%s %s: Gather %v %v", parent.name, what, all, err)
			}
			for i, v := range all {
				if v != i+serial {
					t.Fatalf("%s %s: Gather[%d] = %d", parent.name, what, i, v)
				}
			}
		}
		// Dup made dup's private duplicate already: its first call
		// reuses it. (mpitest initialised MPI, so World's first call
		// made World's.)
		normal("first", parent.name == "dup")

		// A callback error on a remote rank (the root holds its first
		// batches until the call stops), FailFast.
		g := newGate(m.rootSlots())
		end := p.gateTasks(parent.name+" user", g)
		hold := holdRoot(&p, g, func(x int) (int, error) {
			if x == poisonV {
				return 0, fmt.Errorf("boom %d", x)
			}
			return x, nil
		})
		_, err := PmapContext(context.Background(), p.world, m.d, Options{BatchSize: 2, Mode: m.mode}, p.gatedItems(60),
			func(ctx context.Context, x gated) (int, error) { return hold(ctx, int(x)) })
		end()
		if pe := p.sameError(parent.name+" user", err, KindUser); pe.Index != poisonV {
			t.Errorf("%s: callback error %v, want item %d", parent.name, err, poisonV)
		}
		normal("after a callback error", true)

		// A cancelled context: the root cancels its own at its first item,
		// while batches are out on the other ranks.
		cctx, cancel := context.WithCancel(context.Background())
		_, err = PmapContext(cctx, p.world, m.d, Options{BatchSize: 1, Mode: m.mode}, p.items(200), func(ctx context.Context, x int) (int, error) {
			if p.rank == 0 {
				cancel()
			}
			return x, nil
		})
		cancel()
		p.sameError(parent.name+" cancel", err, KindCanceled)
		normal("after a cancelled context", true)

		// An item that fails to decode on the rank that runs it, and a
		// result that fails to decode at the root: wire faults drop the
		// duplicate, so the next call makes a new one.
		var items Maybe[[]poison]
		if p.rank == 0 {
			xs := make([]poison, 60)
			for i := range xs {
				xs[i] = poison{i}
			}
			items = Some(xs)
		}
		// Each: the failing call (on the kept duplicate, freed at its end)
		// and checkDecodeFailure's follow-up calls (a new duplicate, kept).
		decode := func(what string, byRoot bool, call func(g *gate) error) {
			before, dbg := coll.DebugOpens()
			p.checkDecodeFailure(parent.name+" "+what, m, byRoot, call)
			after, _ := coll.DebugOpens()
			if dbg && (after.Dups != before.Dups+1 || after.Frees != before.Frees+1) {
				t.Errorf("%s %s: a wire fault kept its duplicate: before %+v after %+v", parent.name, what, before, after)
			}
			normal("after "+what, true)
		}
		decode("item decode", false, func(g *gate) error {
			hold := holdRoot(&p, g, func(x int) (int, error) { return x, nil })
			_, err := PmapContext(context.Background(), p.world, m.d, Options{BatchSize: 3, Mode: m.mode}, items,
				func(ctx context.Context, q poison) (int, error) { return hold(ctx, q.V) })
			return err
		})
		decode("result decode", true, func(g *gate) error {
			hold := holdRoot(&p, g, func(x int) (poison, error) { return poison{x}, nil })
			_, err := PmapContext(context.Background(), p.world, m.d, Options{BatchSize: 2, Mode: m.mode}, p.gatedItems(60),
				func(ctx context.Context, x gated) (poison, error) { return hold(ctx, int(x)) })
			return err
		})
	}

	// Free and Finalize free the kept duplicates: World's and dup's are
	// kept now.
	s0, dbg := coll.DebugOpens()
	if dbg && s0.Kept != 2 {
		t.Errorf("kept duplicates: %d, want 2 (World's and dup's)", s0.Kept)
	}
	if err := dup.Free(); err != nil {
		t.Fatal(err)
	}
	s1, _ := coll.DebugOpens()
	if dbg && (s1.Kept != 1 || s1.Frees != s0.Frees+1) {
		t.Errorf("after Comm.Free: %+v, want World's duplicate only (before %+v)", s1, s0)
	}
	// MPI was initialised by mpitest: Finalize only frees what Hataori kept.
	if err := Finalize(); err != nil {
		t.Fatal(err)
	}
	s2, _ := coll.DebugOpens()
	if dbg && (s2.Kept != 0 || s2.Frees != s1.Frees+1) {
		t.Errorf("after Finalize: %+v, want none kept (before %+v)", s2, s1)
	}
	// MPI is still up: a call after it makes a new duplicate.
	out, err := Pmap(context.Background(), e.world, nil, Options{}, e.items(5), func(x int) (int, error) { return -x, nil })
	if err != nil || (e.rank == 0 && !slices.Equal(out, []int{0, -1, -2, -3, -4})) {
		t.Errorf("after Finalize: %v %v", out, err)
	}
	if s3, _ := coll.DebugOpens(); dbg && s3.Dups != s2.Dups+1 {
		t.Errorf("after Finalize: %d new duplicates, want 1", s3.Dups-s2.Dups)
	}
	if !dbg {
		t.Log("without hataoridebug: reuse counts not checked")
	}
}
