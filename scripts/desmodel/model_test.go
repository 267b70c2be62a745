package main

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func fixed(b int) Policy { return Policy{Name: "fixed", Batch: b} }

// With every overhead zero the model reaches the ideal: makespan = work /
// slots, for any layout and batch size that divides the items evenly.
func TestZeroCostsReachIdeal(t *testing.T) {
	for _, l := range []struct{ r, s, b int }{{1, 1, 1}, {1, 8, 1}, {4, 16, 1}, {16, 4, 16}, {64, 1, 4}} {
		cfg := Config{Ranks: l.r, SlotsPerRank: l.s, Items: 8 * l.r * l.s * l.b, Dist: Fixed20, Policy: fixed(l.b)}
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want := res.Work / time.Duration(cfg.Slots())
		if res.Makespan != want || math.Abs(res.Eff-1) > 1e-9 || math.Abs(res.EffMakespan-1) > 1e-9 {
			t.Errorf("%+v: makespan %v (want %v), eff %.4f, makespan eff %.4f", l, res.Makespan, want, res.Eff, res.EffMakespan)
		}
	}
}

// One slot is a serial loop: every item's cost plus one lock hold per
// batch, whatever the other costs.
func TestOneSlotIsSerial(t *testing.T) {
	c := DefaultCosts()
	for _, b := range []int{1, 7} {
		cfg := Config{Ranks: 1, SlotsPerRank: 1, Items: 1000, Dist: Heavy20, Policy: fixed(b), Costs: c}
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var work time.Duration
		for i := range cfg.Items {
			work += Heavy20.Cost(i)
		}
		batches := (cfg.Items + b - 1) / b
		// One more lock hold: the dispatch that gets STOP.
		want := work + time.Duration(batches+1)*c.Lock
		if res.Makespan != want {
			t.Errorf("batch %d: makespan %v, want %v (work %v)", b, res.Makespan, want, work)
		}
	}
}

// A remote batch, alone, takes exactly its modelled cycle.
func TestOneRemoteBatch(t *testing.T) {
	c := DefaultCosts()
	// Two ranks of one slot, two items: one for the root, one remote.
	cfg := Config{Ranks: 2, SlotsPerRank: 1, Items: 2, Dist: Fixed20, Policy: fixed(1), Costs: c}
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The root's slot takes the lock first (same instant, scheduled
	// first); the coordinator's decision waits for it.
	task := 2*c.Lock + c.Send + c.Enc // TASK leaves
	remote := task + c.Hop + c.Recv + c.Handoff + c.Dec + Fixed20.Mean + c.Enc + c.Handoff
	result := remote + c.Send + c.Hop + c.Recv + c.Dec + c.Lock // RESULT handled
	ready := max(remote+2*c.Send+c.Hop, result)                 // READY taken up
	// The READY gets STOP, the rank drains.
	stop := ready + c.Recv + c.Lock + c.Send + c.Hop
	drain := stop + c.Recv + c.Send + c.Hop
	if res.Makespan != drain+c.Recv+c.Lock {
		t.Errorf("makespan %v, want %v", res.Makespan, drain+c.Recv+c.Lock)
	}
}

// A saturated dealer deals one remote batch per RootPerBatch: 256 remote
// slots of 20 µs items at batch 1 ask for far more, so the TASK rate is
// the coordinator's capacity.
func TestSaturatedDealerRate(t *testing.T) {
	c := DefaultCosts()
	cfg := Config{Ranks: 65, SlotsPerRank: 4, Items: 65 * 4 * 40, Dist: Fixed20, Policy: fixed(1), Costs: c}
	res, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	capacity := 1e9 / float64(c.RootPerBatch(1))
	if res.CoordUtil < 0.98 || math.Abs(res.RemoteRate/capacity-1) > 0.02 {
		t.Errorf("coordinator %.3f busy, %.0f TASKs/s, want ≈ 1 and %.0f", res.CoordUtil, res.RemoteRate, capacity)
	}
}

// Every policy and layout finishes every item exactly once (Run checks the
// scheduler's own invariants), prefetch included.
func TestInvariants(t *testing.T) {
	for _, p := range []Policy{fixed(1), fixed(3), {Name: "prefetch", Batch: 2, Prefetch: true}, {Name: "auto"}} {
		for _, l := range []struct{ r, s, n int }{{1, 1, 0}, {3, 2, 1}, {5, 3, 97}, {8, 1, 1000}} {
			cfg := Config{Ranks: l.r, SlotsPerRank: l.s, Items: l.n, Dist: Heavy20, Policy: p, Costs: DefaultCosts()}
			if _, err := Run(cfg); err != nil {
				t.Errorf("%v %+v: %v", p, l, err)
			}
		}
	}
}

// BenchmarkItemCodec is the source of Costs.Enc and Dec: one float64 item
// encoded with msgpack into a reused buffer, and decoded back.
func BenchmarkItemCodec(b *testing.B) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	var rd bytes.Reader
	dec := msgpack.NewDecoder(&rd)
	var out float64
	for i := 0; b.Loop(); i++ {
		buf.Reset()
		if err := enc.EncodeFloat64(float64(i)); err != nil {
			b.Fatal(err)
		}
		rd.Reset(buf.Bytes())
		dec.Reset(&rd)
		if err := dec.Decode(&out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSweepSample(b *testing.B) {
	for b.Loop() {
		for _, p := range policies() {
			cfg := Config{Ranks: 64, SlotsPerRank: 64, Items: itemsFor(4096, p, 8), Dist: Heavy20, Policy: p, Costs: DefaultCosts()}
			if _, err := Run(cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
}
