package sched

import (
	"math"
	"slices"
	"time"
)

// The automatic batch-size policy (Config.BatchSize == 0). See the package
// documentation for the rule; these are its constants.
const (
	// StartSize is a rank's automatic batch size before any of its
	// batches has been measured: an item of unknown cost may be long, and
	// a first batch of one item costs one round trip to learn it.
	StartSize = 1
	// Growth bounds how fast a rank's sizes grow: its next batch has at
	// most Growth times the items of the largest batch measured on that
	// rank, so a size is only handed out once a batch of half of it has
	// been seen to complete (joblib's doubling).
	Growth = 2
	// OverheadShare is the target ratio of a batch's compute time to its
	// rank's per-batch overhead: the size is the smallest that makes the
	// overhead at most 1/OverheadShare of the batch's compute
	// (ceil(OverheadShare·overhead/itemCost)). The measured overhead is
	// the round trip's latency only; what a batch also costs the cores
	// that compute (the coordinators' wake-ups and context switches on
	// both ends, several per batch, each taking a slot off its core) is
	// not in it, so the target is well below what the latency alone
	// would need: 20 µs items on 2 ranks reached 0.93 of ideal at 32
	// against 0.89 at 8, with no loss on heavy-tailed or mixed work.
	OverheadShare = 32
	// PrefetchShare is the share above which a rank's round trip is worth
	// overlapping: Prefetch(rank) turns true once the measured overhead
	// exceeds 1/PrefetchShare of a batch's compute at the rank's current
	// size, which happens while a rank's sizes are still below the
	// overhead rule's (the first batches, at most doubling; the factoring
	// cap near the end) and never for items that dwarf the round trip.
	PrefetchShare = 16
	// Factoring is the factoring divisor: a batch never has more than
	// ceil(remaining / (Factoring·W)) items, W being the call's slot count
	// weighted by speed (see the package documentation), so every slot
	// still gets a share of the last items (Hummel et al., 1992: each
	// round hands out half of what remains).
	Factoring = 2
	// MinOverhead is the per-batch overhead assumed when none is measured,
	// and the floor of every measured one: the root's own slots hand off
	// under the scheduler lock in well under a microsecond, but each batch
	// also pays its dispatch and completion bookkeeping; the floor keeps
	// cheap items on the root in batches of a few
	// (ceil(OverheadShare·1µs/cost)).
	MinOverhead = time.Microsecond
	// MaxBatchBytes bounds the bytes an automatic batch moves (unless
	// Config.MaxBatchBytes says otherwise): once a rank's batches have
	// been measured (Timing.Bytes), its next one has at most
	// MaxBatchBytes / (bytes per item) items (at least 1). Far
	// inside a frame's limit (2 GiB), so that larger automatic batches of
	// large values never make a TASK or RESULT that cannot be sent where
	// one item per batch could, and a bound on the memory one batch holds
	// on both ends.
	MaxBatchBytes = 64 << 20
	// MaxSize bounds an automatic batch (items of near-zero measured cost
	// would otherwise be capped only by the factoring share): it bounds a
	// TASK frame and the result window a batch holds.
	MaxSize = 1 << 16
	// OverheadWindow is how many recent overhead samples (round trip minus
	// compute and queueing) a rank keeps; the estimate is their median,
	// robust to one slow round trip (a descheduled coordinator, the
	// call's start-up) in either direction.
	OverheadWindow = 8
)

// costWeight is the weight of a new sample in the item-cost moving
// average: a cost 100 times lower is followed within about 7 batches (the
// sizing cost is the larger of the average and the last sample, so a
// higher one is followed at once).
const costWeight = 0.5

// Timing is what the engine measured for one completed batch; the
// scheduler has no clock of its own. All durations are nonnegative. A
// Timing passed to OnResultTimed or CompleteRootTimed is a measurement
// even when zero (items of no measurable cost); the untimed OnResult and
// CompleteRoot teach the policy nothing.
type Timing struct {
	// Compute is the time the batch's items took where they ran (first
	// item's start to last item's end, on that slot's clock).
	Compute time.Duration
	// RoundTrip is, for a remote slot, the time from sending the TASK to
	// receiving its RESULT on the root's clock (zero: not measured; the
	// root's own slots leave it zero).
	RoundTrip time.Duration
	// Queued is the part of RoundTrip the TASK spent waiting on the remote
	// rank before a slot started it (a prefetched batch waits behind the
	// running one), on that rank's clock; it is not overhead.
	Queued time.Duration
	// Bytes is, for a remote slot, the size of the larger of the batch's
	// TASK and RESULT (frame and bulk segments; zero: not measured; the
	// root's own slots leave it zero).
	Bytes int64
}

func (t Timing) valid() bool {
	return t.Compute >= 0 && t.RoundTrip >= 0 && t.Queued >= 0 && t.Bytes >= 0
}

// Estimate is the policy's view of one rank.
type Estimate struct {
	// Measured counts the rank's batches that came with a Timing.
	Measured int64
	// ItemCost is the compute per item used for sizing: the larger of a
	// moving average (weight 1/2 per batch) and the last batch's, so a
	// cost increase is followed at once and a decrease within a few
	// batches. Zero until Measured > 0.
	ItemCost time.Duration
	// Overhead is the per-batch overhead used for sizing: the median of
	// the last OverheadWindow samples of round trip − compute − queued,
	// at least MinOverhead.
	Overhead time.Duration
	// RoundTrips counts the overhead samples taken (remote slots whose
	// completion carried a RoundTrip).
	RoundTrips int64
	// Size is the size the rank's next batch gets before the
	// remaining-items (factoring) cap: BatchSize when fixed.
	Size int
	// Prefetch is Prefetch(rank).
	Prefetch bool
}

// rankPolicy is the per-rank measurement state.
type rankPolicy struct {
	measured int64
	cost     float64 // moving average, ns per item
	last     float64 // last batch's ns per item
	maxCount int     // largest measured batch
	bytes    float64 // largest bytes per item of a measured batch (0: none)
	ohRing   [OverheadWindow]float64
	ohN      int64   // overhead samples taken
	overhead float64 // median of the ring, ns (valid when ohN > 0)
	prefetch bool
}

// itemCost is the cost per item used for sizing (ns), valid once measured.
func (p *rankPolicy) itemCost() float64 { return max(p.cost, p.last) }

// overheadNs is the overhead used for sizing (ns).
func (p *rankPolicy) overheadNs() float64 {
	o := float64(MinOverhead)
	if p.ohN > 0 {
		o = max(o, p.overhead)
	}
	return o
}

// observe adds one measured batch of count items.
func (p *rankPolicy) observe(count int, t Timing) {
	c := float64(t.Compute) / float64(count)
	if p.measured == 0 {
		p.cost = c
	} else {
		p.cost += costWeight * (c - p.cost)
	}
	p.last = c
	p.measured++
	p.maxCount = max(p.maxCount, count)
	if t.Bytes > 0 {
		p.bytes = max(p.bytes, float64(t.Bytes)/float64(count))
	}
	if t.RoundTrip > 0 {
		o := max(0, float64(t.RoundTrip-t.Compute-t.Queued))
		p.ohRing[p.ohN%OverheadWindow] = o
		p.ohN++
		n := int(min(p.ohN, OverheadWindow))
		w := p.ohRing // a copy, on the stack
		slices.Sort(w[:n])
		p.overhead = w[(n-1)/2]
	}
}

// target is the uncapped size: StartSize unmeasured, else the overhead
// rule bounded by Growth, MaxBatchBytes and MaxSize.
func (p *rankPolicy) target(maxBytes int64) int {
	if p.measured == 0 {
		return StartSize
	}
	limit := min(MaxSize, Growth*p.maxCount)
	if p.bytes > 0 {
		limit = min(limit, max(1, int(float64(maxBytes)/p.bytes)))
	}
	c := p.itemCost()
	if c <= 0 {
		return limit
	}
	t := math.Ceil(OverheadShare * p.overheadNs() / c)
	if t >= float64(limit) {
		return limit
	}
	return max(1, int(t))
}

// updatePrefetch sets the sticky prefetch verdict of a remote rank whose
// batches are size items.
func (p *rankPolicy) updatePrefetch(size int) {
	if p.prefetch || p.ohN == 0 || p.measured == 0 {
		return
	}
	if PrefetchShare*p.overhead > p.itemCost()*float64(size) {
		p.prefetch = true
	}
}

// curSize is rank's size before the remaining-items cap.
func (s *Scheduler) curSize(rank int) int {
	if s.cfg.BatchSize > 0 {
		return s.cfg.BatchSize
	}
	return s.pol[rank].target(s.maxBytes)
}

// size is the size of rank's next batch with rem > 0 items unassigned.
func (s *Scheduler) size(rank, rem int) int {
	if s.cfg.BatchSize > 0 {
		return min(s.cfg.BatchSize, rem)
	}
	n := min(s.pol[rank].target(s.maxBytes), rem)
	if c := s.factoringCap(rank, rem); c < n {
		n = c
	}
	return max(1, n)
}

// factoringCap is ceil(rem / (Factoring·W)) with W = Σ over every slot q
// of max(1, cost(rank)/cost(q's rank)), unknown costs counting 1: a rank
// slower than another gets a share of what remains in proportion to its
// speed, none more than the equal share. Cost O(ranks).
func (s *Scheduler) factoringCap(rank, rem int) int {
	w := float64(s.totalSlots)
	if p := &s.pol[rank]; p.measured > 0 && p.itemCost() > 0 {
		cr := p.itemCost()
		w = 0
		for q, n := range s.cfg.Slots {
			ratio := 1.0
			if pq := &s.pol[q]; pq.measured > 0 && pq.itemCost() > 0 {
				ratio = max(1, cr/pq.itemCost())
			}
			w += float64(n) * ratio
		}
	}
	c := math.Ceil(float64(rem) / (Factoring * w))
	if c >= float64(rem) {
		return rem
	}
	return max(1, int(c))
}

// Prefetch reports whether rank's measurements say its round trip is a
// measurable share of its batches: some completion of rank carried a
// RoundTrip, and the median overhead exceeds 1/PrefetchShare of a batch's
// compute at the rank's current size (BatchSize when fixed). The verdict
// is sticky: once true it stays true for the call (a prefetch slot, once
// used, is not withdrawn). It is always false for the root (its slots take
// their next batch directly) and for an invalid rank. Option
// Prefetch: true forcing prefetch is the engine's concern.
func (s *Scheduler) Prefetch(rank int) bool {
	return rank >= 0 && rank < len(s.pol) && rank != s.cfg.Root && s.pol[rank].prefetch
}

// Estimate returns the policy's view of rank (the zero Estimate for an
// invalid rank).
func (s *Scheduler) Estimate(rank int) Estimate {
	if rank < 0 || rank >= len(s.pol) {
		return Estimate{}
	}
	p := &s.pol[rank]
	e := Estimate{Measured: p.measured, Overhead: time.Duration(p.overheadNs()), RoundTrips: p.ohN, Size: s.curSize(rank), Prefetch: s.Prefetch(rank)}
	if p.measured > 0 {
		e.ItemCost = time.Duration(p.itemCost())
	}
	return e
}

// Automatic reports whether batch sizes are automatic (BatchSize == 0).
func (s *Scheduler) Automatic() bool { return s.cfg.BatchSize == 0 }
