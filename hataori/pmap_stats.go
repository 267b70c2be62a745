package hataori

import (
	"cmp"
	"slices"
	"time"

	"github.com/hataori/hataori-go/internal/sched"
)

// CallStats is where one [Pmap] call's work and time went, filled on the
// root (Options.Stats) once the call has run: after success, and also after
// a failure that passed the preflight (then it describes the call until it
// stopped). Rows are ranks, columns a rank's slots: the batches it runs at
// once (a domain's workers in [Outer] mode, one otherwise, one per lane).
//
// Items, Batches, Busy and Idle count per slot as it ran: Busy is the time
// the slot spent on its batches (on a remote rank: decoding the items,
// running the callbacks, encoding the results; on the root, whose slots
// take their next batch directly, from its first batch to its STOP), Idle
// the rest of that rank's call (waiting for a TASK, or done while other
// slots still ran). SentBytes[r] and RecvBytes[r] are the frame bytes the
// root sent to and received from rank r (0 for the root itself, whose
// batches are never encoded).
//
// The cost, measured on the trivial-item benchmark (see docs/PERFORMANCE.md), is
// within noise: counters, two clock readings per batch on the other ranks
// and two per slot on the root, and a few bytes in each rank's final
// DRAIN message. With RecordSpans set, every batch also gets a [BatchSpan]
// (two clock readings per batch on every rank, a few dozen bytes each,
// sent to the root at the end): meant for pictures of the load balance,
// such as scripts/timeline.
type CallStats struct {
	// RecordSpans, set by the caller before the call, asks for Spans.
	RecordSpans bool

	// Wall is the root's time from the end of the preflight to the end of
	// the drain.
	Wall time.Duration
	// Items[r][s] and Batches[r][s] are the items and batches slot s of
	// rank r ran.
	Items, Batches [][]int64
	// Sizes[r][s] summarises the sizes of the batches slot s of rank r
	// ran (rows and columns as for Items): with automatic batch sizes
	// (BatchSize 0) they show what the policy chose; a fixed size B gives
	// Min = Median = Max = B, except for a shorter last batch.
	Sizes [][]BatchSizes
	// Busy[r][s] and Idle[r][s] split rank r's call time between the time
	// slot s spent on batches and the rest.
	Busy, Idle [][]time.Duration
	// SentBytes[r], RecvBytes[r]: frame bytes from the root to rank r, and
	// from rank r to the root.
	SentBytes, RecvBytes []int64
	// Spans lists every batch (with RecordSpans), by rank, slot and time.
	Spans []BatchSpan
}

// BatchSizes summarises the sizes of a slot's batches: how many batches
// it ran and their smallest, median (the lower one of an even count, so
// always a size that was given) and largest item counts; all zero when it
// ran none.
type BatchSizes struct {
	Batches          int64
	Min, Median, Max int
}

// batchSizes converts the scheduler's summary.
func batchSizes(z sched.Sizes) BatchSizes {
	return BatchSizes{Batches: z.Batches, Min: z.Min, Median: z.Median, Max: z.Max}
}

// BatchSpan is one batch as a slot ran it. Begin and End count from the
// end of that rank's preflight, which the ranks leave together (within a
// message latency), so spans of different ranks share a time axis.
type BatchSpan struct {
	Rank, Slot int
	// Batch is the batch id (batches are numbered in input order); Start
	// its first input index and Count its items.
	Batch        int64
	Start, Count int
	Begin, End   time.Duration
}

// Progress is what Options.OnProgress receives: Done items finished (with a
// result or an error), Failed of them with an error (as far as the root
// knows yet: under [FailFast] the first failing item of a batch; under
// [CollectAll] every one), Total items, Elapsed since the call started.
type Progress struct {
	Done, Failed, Total int
	Elapsed             time.Duration
}

// DefaultProgressEvery is the least interval between two OnProgress calls
// when Options.ProgressEvery is zero.
const DefaultProgressEvery = 100 * time.Millisecond

// slotMeter is one slot's record of a call, written by that slot alone.
type slotMeter struct {
	items, batches int64
	sizes          sched.SizeHist // the sizes of the batches (a remote slot's; the root's come from its scheduler)
	begin, end     time.Duration  // the root: first batch to STOP
	busy           time.Duration
	spans          []BatchSpan
}

// The DRAIN payload: raw int64s, drainVersion, the rank's wall time (ns),
// its slot count S, S × (items, batches, busy ns, smallest, median and
// largest batch size), the span count, and 6 int64s per span (slot, batch
// id, start, count, begin ns, end ns).
const (
	drainVersion = 2
	drainPerSlot = 6
)

func drainStats(wall time.Duration, meters []slotMeter) []int64 {
	n := 0
	for i := range meters {
		n += len(meters[i].spans)
	}
	out := make([]int64, 0, 4+drainPerSlot*len(meters)+6*n)
	out = append(out, drainVersion, int64(wall), int64(len(meters)))
	for _, m := range meters {
		z := m.sizes.Summary()
		out = append(out, m.items, m.batches, int64(m.busy), int64(z.Min), int64(z.Median), int64(z.Max))
	}
	out = append(out, int64(n))
	for _, m := range meters {
		for _, sp := range m.spans {
			out = append(out, int64(sp.Slot), sp.Batch, int64(sp.Start), int64(sp.Count), int64(sp.Begin), int64(sp.End))
		}
	}
	return out
}

// rankStats is one remote rank's DRAIN statistics.
type rankStats struct {
	wall   time.Duration
	meters []slotMeter
	sizes  []BatchSizes // per slot
}

// parseDrainStats reads a DRAIN payload; ok is false for an empty or
// malformed one (the root then falls back to its scheduler's counts).
func parseDrainStats(v []int64, rank int) (rankStats, bool) {
	if len(v) < 4 || v[0] != drainVersion || v[2] < 1 || v[2] > int64(len(v)) {
		return rankStats{}, false
	}
	st := rankStats{wall: time.Duration(v[1]), meters: make([]slotMeter, v[2]), sizes: make([]BatchSizes, v[2])}
	p := v[3:]
	if int64(len(p)) < drainPerSlot*v[2]+1 {
		return rankStats{}, false
	}
	for s := range st.meters {
		st.meters[s] = slotMeter{items: p[0], batches: p[1], busy: time.Duration(p[2])}
		st.sizes[s] = BatchSizes{Batches: p[1], Min: int(p[3]), Median: int(p[4]), Max: int(p[5])}
		p = p[drainPerSlot:]
	}
	ns := p[0]
	p = p[1:]
	if ns < 0 || int64(len(p)) != 6*ns {
		return rankStats{}, false
	}
	for range ns {
		s := int(p[0])
		if s < 0 || s >= len(st.meters) {
			return rankStats{}, false
		}
		st.meters[s].spans = append(st.meters[s].spans, BatchSpan{Rank: rank, Slot: s, Batch: p[1], Start: int(p[2]), Count: int(p[3]),
			Begin: time.Duration(p[4]), End: time.Duration(p[5])})
		p = p[6:]
	}
	return st, true
}

// buildStats assembles the root's CallStats: the root's own slots from its
// meters and its scheduler's counts, each other rank from its DRAIN
// statistics (or, failing those, the scheduler's counts per slot the root
// saw, with no times).
func buildStats(root int, wall time.Duration, rootMeters []slotMeter, sch sched.Stats, remote []rankStats, have []bool, sent, recv []int64, spans bool) CallStats {
	n := len(sch.Items)
	cs := CallStats{RecordSpans: spans, Wall: wall, Items: make([][]int64, n), Batches: make([][]int64, n), Sizes: make([][]BatchSizes, n),
		Busy: make([][]time.Duration, n), Idle: make([][]time.Duration, n),
		SentBytes: append([]int64(nil), sent...), RecvBytes: append([]int64(nil), recv...)}
	row := func(r int, w time.Duration, ms []slotMeter) {
		cs.Busy[r], cs.Idle[r] = make([]time.Duration, len(ms)), make([]time.Duration, len(ms))
		for s, m := range ms {
			cs.Busy[r][s] = min(m.busy, w)
			cs.Idle[r][s] = w - cs.Busy[r][s]
			cs.Spans = append(cs.Spans, m.spans...)
		}
	}
	schedSizes := func(r int) []BatchSizes {
		out := make([]BatchSizes, len(sch.Sizes[r]))
		for s, z := range sch.Sizes[r] {
			out[s] = batchSizes(z)
		}
		return out
	}
	for r := range n {
		switch {
		case r == root:
			cs.Items[r], cs.Batches[r], cs.Sizes[r] = sch.Items[r], sch.Batches[r], schedSizes(r)
			row(r, wall, rootMeters)
		case have[r]:
			ms := remote[r].meters
			cs.Items[r], cs.Batches[r] = make([]int64, len(ms)), make([]int64, len(ms))
			for s, m := range ms {
				cs.Items[r][s], cs.Batches[r][s] = m.items, m.batches
			}
			cs.Sizes[r] = remote[r].sizes
			row(r, remote[r].wall, ms)
		default:
			cs.Items[r], cs.Batches[r], cs.Sizes[r] = sch.Items[r], sch.Batches[r], schedSizes(r)
			cs.Busy[r], cs.Idle[r] = make([]time.Duration, len(sch.Items[r])), make([]time.Duration, len(sch.Items[r]))
		}
	}
	slices.SortFunc(cs.Spans, func(a, b BatchSpan) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Slot, b.Slot), cmp.Compare(a.Begin, b.Begin))
	})
	if !spans {
		cs.Spans = nil
	}
	return cs
}
