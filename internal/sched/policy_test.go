package sched

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

const us = time.Microsecond

// sizeFor is the overhead rule's size for overhead o and item cost c:
// ceil(OverheadShare·o/c).
func sizeFor(o, c time.Duration) int {
	return int(math.Ceil(OverheadShare * float64(o) / float64(c)))
}

// doublingTo is the size sequence of a rank that measures every batch
// before its next one: StartSize, doubling, up to target, then target,
// n sizes in all.
func doublingTo(target, n int) []int {
	out := []int{StartSize}
	for len(out) < n {
		out = append(out, min(target, Growth*out[len(out)-1]))
	}
	return out
}

// TestAutoGrowthDoublesToTheOverheadTarget: a rank's first batch has
// StartSize items, each next one at most Growth times the largest it has
// measured, until the overhead rule's ceil(OverheadShare·o/c) holds (960
// for a remote rank with 60 µs of overhead and 2 µs items, 16 for the
// root, whose overhead is MinOverhead).
func TestAutoGrowthDoublesToTheOverheadTarget(t *testing.T) {
	m := runModel(t, 1_000_000, 0, uniform(2, 2*us, 60*us))
	remote, root := m.sizesOf(1), m.sizesOf(0)
	rt, ot := sizeFor(60*us, 2*us), sizeFor(MinOverhead, 2*us)
	if want := doublingTo(rt, 14); !slices.Equal(remote[:len(want)], want) || want[len(want)-1] != rt {
		t.Errorf("remote sizes start %v, want %v", remote[:len(want)], want)
	}
	if want := doublingTo(ot, 8); !slices.Equal(root[:len(want)], want) || want[len(want)-1] != ot {
		t.Errorf("root sizes start %v, want %v", root[:len(want)], want)
	}
	if e := m.s.Estimate(1); e.ItemCost != 2*us || e.Overhead != 60*us || e.Size != rt {
		t.Errorf("remote estimate %+v", e)
	}
	if e := m.s.Estimate(0); e.ItemCost != 2*us || e.Overhead != MinOverhead || e.Size != ot || e.RoundTrips != 0 {
		t.Errorf("root estimate %+v", e)
	}
	// Several slots of a rank: none grows past twice what the rank has
	// measured, even when the slots are dispatched before any completion.
	rs := uniform(3, 2*us, 60*us)
	rs[1].slots, rs[2].slots = 3, 2
	m = runModel(t, 200_000, 0, rs)
	maxDone := make([]int, len(rs))
	done := make([][]modelBatch, len(rs))
	for _, b := range m.batches {
		for _, d := range done[b.rank] {
			if d.done <= b.at {
				maxDone[b.rank] = max(maxDone[b.rank], d.Count)
			}
		}
		limit := StartSize
		if maxDone[b.rank] > 0 {
			limit = Growth * maxDone[b.rank]
		}
		if b.Count > limit {
			t.Fatalf("batch %+v of rank %d: %d items, limit %d", b.Batch, b.rank, b.Count, limit)
		}
		done[b.rank] = append(done[b.rank], b)
	}
}

// TestBatchBytesCap: a remote rank whose results are large gets batches
// of at most MaxBatchBytes of them once it has been measured, however
// cheap its items; one whose single result exceeds that still gets one
// item per batch; the root, which reports no bytes, is not capped.
func TestBatchBytesCap(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  int // the remote's steady size
	}{{0, sizeFor(60*us, 2*us)}, {1 << 20, MaxBatchBytes >> 20}, {3 << 20, MaxBatchBytes / (3 << 20)}, {100 << 20, 1}} {
		rs := uniform(2, 2*us, 60*us)
		rs[1].bytes = c.bytes
		m := runModel(t, 400_000, 0, rs)
		sizes := m.sizesOf(1)
		if c.bytes > 0 {
			for k, n := range sizes {
				if int64(n)*c.bytes > max(MaxBatchBytes, c.bytes) {
					t.Fatalf("%d bytes per item: batch %d of the remote has %d items, %d bytes", c.bytes, k, n, int64(n)*c.bytes)
				}
			}
		}
		if slices.Max(sizes) != c.want {
			t.Errorf("%d bytes per item: largest remote batch %d, want %d", c.bytes, slices.Max(sizes), c.want)
		}
		if e := m.s.Estimate(0); e.Size != sizeFor(MinOverhead, 2*us) {
			t.Errorf("%d bytes per item on the remote: root estimate %+v", c.bytes, e)
		}
	}
	s := mustNew(t, Config{Items: 10, Root: 0, Slots: []int{1, 1}})
	r := dec(s.OnReady(1, 0))
	mustOK(t, "OnReady", r.err)
	if err := s.OnResultTimed(1, 0, r.b.ID, r.b.Indices(), true, Timing{Compute: us, RoundTrip: 2 * us, Bytes: -1}); err == nil {
		t.Error("a negative Bytes was accepted")
	}
}

// TestFactoringCapBoundsEveryBatch: no automatic batch has more than
// ceil(remaining / (2·slots)) items, and with near-free items (sizes
// limited by nothing else) the cap is what sizes them.
func TestFactoringCapBoundsEveryBatch(t *testing.T) {
	for _, c := range []struct {
		n     int
		cost  time.Duration
		ranks int
		slots int
	}{{10_000, 0, 2, 2}, {10_000, time.Nanosecond, 4, 1}, {100_000, 2 * us, 3, 2}, {5000, 20 * us, 1, 4}} {
		rs := uniform(c.ranks, c.cost, 1*time.Millisecond)
		for r := range rs {
			rs[r].slots = c.slots
		}
		m := runModel(t, c.n, 0, rs)
		bound := 0
		for _, b := range m.batches {
			capN := int(math.Ceil(float64(c.n-b.Start) / float64(Factoring*m.slots)))
			if b.Count > capN || b.Count < 1 {
				t.Fatalf("%+v: batch %+v of rank %d, cap %d", c, b.Batch, b.rank, capN)
			}
			if b.Count == capN && capN > 1 {
				bound++
			}
		}
		if c.cost == time.Nanosecond && bound < 10 {
			t.Errorf("%+v: the factoring cap sized %d batches, want it binding", c, bound)
		}
	}
}

// TestTailSpreadsOverEverySlot: with equal costs the last batches are
// small, every slot takes part in them, and every slot finishes within a
// few small batches of the end; a fixed size of the steady-state
// automatic size (ceil(OverheadShare·60/20)) does not.
func TestTailSpreadsOverEverySlot(t *testing.T) {
	rs := uniform(4, 20*us, 60*us)
	for r := range rs {
		rs[r].slots = 2
	}
	auto := runModel(t, 20_000, 0, rs)
	steady := sizeFor(60*us, 20*us)
	fixed := runModel(t, 20_000, steady, rs)
	spread := func(m modelRun) (time.Duration, []int) {
		end := map[[2]int]time.Duration{}
		var lastSizes []int
		for _, b := range m.batches {
			end[[2]int{b.rank, b.slot}] = max(end[[2]int{b.rank, b.slot}], b.done)
		}
		first := m.makespan
		for _, e := range end {
			first = min(first, e)
		}
		for _, b := range m.batches[len(m.batches)-2*m.slots:] {
			lastSizes = append(lastSizes, b.Count)
		}
		return m.makespan - first, lastSizes
	}
	sa, lastA := spread(auto)
	sf, _ := spread(fixed)
	t.Logf("finish spread: auto %v, fixed %d %v; last %d auto sizes %v", sa, steady, sf, 2*auto.slots, lastA)
	if slices.Max(lastA) > 4 || lastA[len(lastA)-1] != 1 {
		t.Errorf("last automatic batches %v, want small, ending with 1", lastA)
	}
	if sa > 100*us || sa >= sf {
		t.Errorf("slots finish %v apart (fixed %d: %v), want within 100µs", sa, steady, sf)
	}
	seen := map[[2]int]bool{}
	for _, b := range auto.batches[len(auto.batches)-3*auto.slots:] {
		seen[[2]int{b.rank, b.slot}] = true
	}
	if len(seen) != auto.slots {
		t.Errorf("the last %d batches went to %d of %d slots", 3*auto.slots, len(seen), auto.slots)
	}
}

// stepCost costs a before index at and b from it.
func stepCost(at int, a, b time.Duration) func(int) time.Duration {
	return func(i int) time.Duration {
		if i < at {
			return a
		}
		return b
	}
}

// TestCostChangeMidInput: when the items get 100 times dearer halfway,
// each slot runs at most the batch it was given before it could know and
// one mixed batch at the old size, then sizes follow the new cost
// (ceil(OverheadShare·60/200)); when they get 100 times cheaper, sizes
// grow back (doublings while the cost average follows: 90 % of the target
// within 12 batches, all of it within 20).
func TestCostChangeMidInput(t *testing.T) {
	const n = 20_000
	rs := uniform(3, 0, 60*us)
	for r := range rs {
		rs[r].cost = stepCost(n/2, 2*us, 200*us)
	}
	m := runModel(t, n, 0, rs)
	dear, cheap := sizeFor(60*us, 200*us), sizeFor(60*us, 2*us)
	long := map[int]int{}
	for _, b := range m.batches {
		if b.End() > n/2 && b.rank != 0 && b.Count > dear {
			long[b.rank]++
		}
	}
	for r := 1; r < 3; r++ {
		if long[r] > 2 {
			t.Errorf("rank %d: %d batches larger than %d after the cost rose", r, long[r], dear)
		}
		if e := m.s.Estimate(r); e.Size != dear {
			t.Errorf("rank %d at the end: %+v, want size %d", r, e, dear)
		}
	}
	if eff := m.efficiency(); eff < 0.85 {
		t.Errorf("efficiency %.3f after a cost rise", eff)
	}

	for r := range rs {
		rs[r].cost = stepCost(n/2, 200*us, 2*us)
	}
	m = runModel(t, 200_000, 0, rs)
	sz := m.sizesOf(1)
	before := 0 // rank 1's batches entirely before the change
	for _, b := range m.batches {
		if b.rank == 1 && b.End() <= n/2 {
			before++
		}
	}
	regrow := sz[before:]
	near := slices.IndexFunc(regrow, func(n int) bool { return n >= cheap*9/10 })
	full := slices.Index(regrow, cheap)
	if near < 0 || near > 12 || full < 0 || full > 20 {
		t.Errorf("rank 1 regrew to 90%% of %d in %d batches, to %d in %d, want ≤ 12 and ≤ 20: %v", cheap, near, cheap, full, regrow[:min(len(regrow), 24)])
	}
}

// TestSlowRankGetsSmallerBatches: a rank with items 10 times dearer gets
// batches of about a tenth of the items from its own measurements (same
// duration, same overhead share), a tenth of the factoring share in the
// tail, and the call ends close to the fluid ideal.
func TestSlowRankGetsSmallerBatches(t *testing.T) {
	const n = 50_000
	rs := uniform(3, 20*us, 60*us)
	rs[2].cost = constCost(200 * us)
	m := runModel(t, n, 0, rs)
	st := m.s.Stats()
	fast, slow := st.RankSizes[1], st.RankSizes[2]
	t.Logf("sizes fast %+v slow %+v", fast, slow)
	if f, sl := sizeFor(60*us, 20*us), sizeFor(60*us, 200*us); fast.Median != f || slow.Median != sl {
		t.Errorf("median sizes fast %d slow %d, want %d and %d", fast.Median, slow.Median, f, sl)
	}
	// Fluid ideal: n items over speeds 1/20 + 1/20 + 1/200 per µs.
	ideal := time.Duration(math.Round(float64(n) / (2.0/20 + 1.0/200) * float64(us)))
	if r := float64(m.makespan) / float64(ideal); r > 1.08 {
		t.Errorf("makespan %v, %.3f of the fluid ideal %v", m.makespan, r, ideal)
	}
	// In the tail the slow rank's share shrinks with its speed: its last
	// batch ends no later than a fast rank's last batch plus one slow item.
	var lastFast, lastSlow time.Duration
	for _, b := range m.batches {
		if b.rank == 2 {
			lastSlow = max(lastSlow, b.done)
		} else {
			lastFast = max(lastFast, b.done)
		}
	}
	if lastSlow > lastFast+260*us {
		t.Errorf("the slow rank ends %v after the others", lastSlow-lastFast)
	}

	// Where the factoring cap sizes the batches (cheap items, a long
	// round trip), the slow rank's cap shrinks with its speed: it ends
	// with the others (76µs after them here; 2.5ms with the unweighted
	// cap ceil(remaining/(2·slots))).
	rs = uniform(3, 2*us, time.Millisecond)
	rs[2].cost = constCost(20 * us)
	m = runModel(t, 100_000, 0, rs)
	lastFast, lastSlow = 0, 0
	for _, b := range m.batches {
		if b.rank == 2 {
			lastSlow = max(lastSlow, b.done)
		} else {
			lastFast = max(lastFast, b.done)
		}
	}
	if lastSlow > lastFast+500*us {
		t.Errorf("capped sizes: the slow rank ends %v after the others", lastSlow-lastFast)
	}
}

// TestRootAndRemoteOverhead: the root's own slots, which report no round
// trip, are sized with MinOverhead; a remote slot with round trip − compute
// − queued, the median of the recent samples, so one slow round trip (the
// call's start-up) moves nothing once three samples are in.
func TestRootAndRemoteOverhead(t *testing.T) {
	s := mustNew(t, Config{Items: 1_000_000, Root: 0, Slots: []int{1, 1}})
	// Enough batches for the remote's doublings to reach its target.
	rtt := []time.Duration{40 * time.Millisecond, 60 * us, 60 * us, 60 * us, 60 * us, 60 * us, 60 * us, 60 * us}
	for k, o := range rtt {
		r := dec(s.RootDispatch(0))
		mustOK(t, "RootDispatch", r.err)
		mustOK(t, "CompleteRootTimed", s.CompleteRootTimed(0, true, Timing{Compute: time.Duration(r.b.Count) * 20 * us}))
		r = dec(s.OnReady(1, 0))
		mustOK(t, "OnReady", r.err)
		c := time.Duration(r.b.Count) * 20 * us
		mustOK(t, "OnResultTimed", s.OnResultTimed(1, 0, r.b.ID, r.b.Indices(), true, Timing{Compute: c, RoundTrip: c + o + 30*us, Queued: 30 * us}))
		if e := s.Estimate(1); k >= 2 && e.Overhead != 60*us {
			t.Errorf("after %d round trips: %+v, want 60µs overhead", k+1, e)
		}
	}
	root, remote := s.Estimate(0), s.Estimate(1)
	if want := sizeFor(MinOverhead, 20*us); root.Overhead != MinOverhead || root.Size != want || root.ItemCost != 20*us {
		t.Errorf("root %+v, want 1µs overhead and size ceil(OverheadShare·1/20) = %d", root, want)
	}
	if want := sizeFor(60*us, 20*us); remote.Overhead != 60*us || remote.RoundTrips != int64(len(rtt)) || remote.Size != want {
		t.Errorf("remote %+v, want 60µs overhead and size ceil(OverheadShare·60/20) = %d", remote, want)
	}
}

// TestPrefetchVerdict: a remote rank whose round trip exceeds 1/16 of a
// batch's compute at its size gets Prefetch, for good; one whose items
// dwarf it does not; the root never; with a fixed size the verdict uses
// that size.
func TestPrefetchVerdict(t *testing.T) {
	one := func(batch int, cost, o time.Duration, rounds int) *Scheduler {
		s := mustNew(t, Config{Items: 100_000, BatchSize: batch, Root: 0, Slots: []int{1, 1}})
		for range rounds {
			r := dec(s.OnReady(1, 0))
			mustOK(t, "OnReady", r.err)
			c := time.Duration(r.b.Count) * cost
			mustOK(t, "OnResultTimed", s.OnResultTimed(1, 0, r.b.ID, r.b.Indices(), true, Timing{Compute: c, RoundTrip: c + o}))
			r = dec(s.RootDispatch(0))
			mustOK(t, "RootDispatch", r.err)
			mustOK(t, "CompleteRootTimed", s.CompleteRootTimed(0, true, Timing{Compute: time.Duration(r.b.Count) * cost}))
		}
		return s
	}
	if s := one(0, 20*us, 60*us, 0); s.Prefetch(1) {
		t.Error("Prefetch before any measurement")
	}
	if s := one(0, 20*us, 60*us, 1); !s.Prefetch(1) || s.Prefetch(0) || s.Prefetch(2) || s.Prefetch(-1) {
		t.Errorf("20µs items, 60µs round trip: Prefetch %v (root %v)", s.Prefetch(1), s.Prefetch(0))
	}
	if s := one(0, time.Millisecond, 60*us, 20); s.Prefetch(1) {
		t.Errorf("1ms items, 60µs round trip: Prefetch %+v", s.Estimate(1))
	}
	if s := one(64, 20*us, 60*us, 5); s.Prefetch(1) {
		t.Errorf("fixed 64 × 20µs, 60µs round trip: Prefetch %+v", s.Estimate(1))
	}
	if s := one(16, 20*us, 60*us, 1); !s.Prefetch(1) {
		t.Errorf("fixed 16 × 20µs, 60µs round trip: no Prefetch %+v", s.Estimate(1))
	}
	// Sticky: dearer items later do not withdraw it.
	s := one(0, 20*us, 60*us, 3)
	for range 10 {
		r := dec(s.OnReady(1, 0))
		c := time.Duration(r.b.Count) * 10 * time.Millisecond
		mustOK(t, "OnResultTimed", s.OnResultTimed(1, 0, r.b.ID, r.b.Indices(), true, Timing{Compute: c, RoundTrip: c + 60*us}))
	}
	if !s.Prefetch(1) {
		t.Error("Prefetch withdrawn")
	}
}

// TestTimingRules: a negative duration is a protocol error that changes
// nothing; an untimed completion or a failed batch teaches nothing, a
// zero Timing is a measurement; a fixed size ignores measurements.
func TestTimingRules(t *testing.T) {
	s := mustNew(t, Config{Items: 100, Root: 0, Slots: []int{1, 1}})
	r := dec(s.OnReady(1, 0))
	mustOK(t, "OnReady", r.err)
	mustOK(t, "RootDispatch", err3(s.RootDispatch(0)))
	for _, bad := range []Timing{{Compute: -1}, {RoundTrip: -1}, {Queued: -1}} {
		before := snapshot(s)
		wantUnchanged(t, "OnResultTimed", s, before, "OnResult", s.OnResultTimed(1, 0, r.b.ID, r.b.Indices(), true, bad))
		wantUnchanged(t, "CompleteRootTimed", s, before, "CompleteRoot", s.CompleteRootTimed(0, true, bad))
	}
	mustOK(t, "OnResult", s.OnResult(1, 0, r.b.ID, r.b.Indices(), true))
	mustOK(t, "CompleteRootTimed", s.CompleteRootTimed(0, true, Timing{}))
	if e := s.Estimate(1); e.Measured != 0 || e.Size != StartSize {
		t.Errorf("after an untimed RESULT: %+v", e)
	}
	if e := s.Estimate(0); e.Measured != 1 || e.ItemCost != 0 || e.Size != Growth*StartSize {
		t.Errorf("after a zero Timing: %+v", e)
	}
	r = dec(s.OnReady(1, 0))
	if r.b.Count != StartSize {
		t.Errorf("unmeasured rank got %+v", r.b)
	}
	mustOK(t, "OnResultTimed", s.OnResultTimed(1, 0, r.b.ID, r.b.Indices(), false, Timing{Compute: us, RoundTrip: 9 * us}))
	if e := s.Estimate(1); e.Measured != 0 {
		t.Errorf("a failed batch was measured: %+v", e)
	}
	if !s.Exhausted() {
		t.Error("not Exhausted after a failure")
	}

	fixed := runModel(t, 1000, 7, uniform(3, 2*us, 60*us))
	for k, b := range fixed.batches {
		if want := (Batch{ID: int64(k), Start: 7 * k, Count: min(7, 1000-7*k)}); b.Batch != want {
			t.Fatalf("fixed size with measurements: batch %+v, want %+v", b.Batch, want)
		}
	}
	if e := fixed.s.Estimate(1); e.Size != 7 || e.Measured == 0 {
		t.Errorf("fixed-size estimate %+v", e)
	}
}

// TestSizesSummary: smallest, lower median and largest per slot and rank.
func TestSizesSummary(t *testing.T) {
	var a, b SizeHist
	for _, n := range []int{5, 1, 5, 3, 9, 5} {
		a.add(n)
	}
	for _, n := range []int{2, 2} {
		b.add(n)
	}
	if got, want := summary(a), (Sizes{Batches: 6, Min: 1, Median: 5, Max: 9}); got != want {
		t.Errorf("summary(a) = %+v, want %+v", got, want)
	}
	if got, want := summary(a, b), (Sizes{Batches: 8, Min: 1, Median: 3, Max: 9}); got != want {
		t.Errorf("summary(a, b) = %+v, want %+v", got, want)
	}
	if got := summary(); got != (Sizes{}) {
		t.Errorf("summary() = %+v", got)
	}
	if !reflect.DeepEqual(a, SizeHist{{1, 1}, {3, 1}, {5, 3}, {9, 1}}) {
		t.Errorf("histogram %v", a)
	}
	m := runModel(t, 1000, 0, uniform(2, 2*us, 60*us))
	st := m.s.Stats()
	for r := range 2 {
		var items int64
		for _, n := range m.sizesOf(r) {
			items += int64(n)
		}
		sz := slices.Sorted(slices.Values(m.sizesOf(r)))
		want := Sizes{Batches: int64(len(sz)), Min: sz[0], Median: sz[(len(sz)-1)/2], Max: sz[len(sz)-1]}
		if st.RankSizes[r] != want || st.Sizes[r][0] != want || st.Items[r][0] != items {
			t.Errorf("rank %d: %+v / %+v, want %+v", r, st.RankSizes[r], st.Sizes[r][0], want)
		}
	}
}
