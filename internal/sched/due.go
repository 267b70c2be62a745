package sched

import "slices"

// Due predicts when each remote slot's RESULT reaches the root, so that a
// root coordinator whose slots compute can sleep until then instead of
// waking every poll interval (each wake-up costs the slot it shares its
// core with the time of a context switch and an MPI progress call). It
// has no clock of its own: times (nanoseconds since any fixed origin) come
// in with the events. Not safe for concurrent use (the coordinator owns
// it).
//
// The model of a remote rank is a queue in front of its executor slots: a
// TASK sent while fewer of the rank's TASKs than it has executor slots are
// outstanding starts at once, one sent beyond that (a prefetched batch)
// starts when the first of them returns. A running TASK is due at its
// start plus its expected compute (items × the policy's item cost, given
// by the caller) plus the lateness: a low quantile (the lowest eighth,
// dueQuantile) of the last DueWindow observations of arrival − predicted
// end (transit both ways, the remote rank's hand-offs and the error of the
// cost; the coordinator only sees a RESULT when it polls, so an
// observation is the true lateness or more). A low quantile rather than
// the lowest: one RESULT that came much earlier than predicted (its work
// overestimated: the policy's item cost leans high after a slow batch)
// would otherwise make every later prediction early by as much, and the
// root would poll every back-off step until each RESULT came (hundreds of
// wake-ups per call on a shared core). A prediction that is too early
// costs a few polls; one that is too late delays the slot's next TASK,
// which a prefetched batch hides.
type Due struct {
	first  []int            // per rank: the index of its slot 0 in the tables
	end    []int64          // per remote slot: predicted end of its running TASK; dueNone, dueUnknown
	work   []int64          // per remote slot: expected compute of a queued TASK (0: none queued)
	sentAt []int64          // per remote slot: when its queued TASK left (queue order)
	late   int64            // lateness estimate: the dueQuantile of obs (0 before any)
	obs    [DueWindow]int64 // the last observations, a ring
	nObs   int              // observations in obs (at most DueWindow)
	head   int              // where the next observation goes
}

const (
	dueNone    = -1 // no TASK outstanding (or only a queued one)
	dueUnknown = -2 // a running TASK of unknown cost
	// DueWindow is how many arrivals a lateness estimate spans.
	DueWindow = 32
	// dueQuantile: the lateness is the observation 1/dueQuantile of the
	// way up the window (the lowest while it holds fewer than dueQuantile).
	dueQuantile = 8
)

// NewDue returns the model of a call whose rank r has slots[r] logical
// slots, the root's not tracked.
func NewDue(slots []int, root int) *Due {
	d := &Due{first: make([]int, len(slots))}
	n := 0
	for r, s := range slots {
		d.first[r] = n
		if r != root {
			n += s
		}
	}
	d.end = make([]int64, n)
	d.work = make([]int64, n)
	d.sentAt = make([]int64, n)
	for i := range d.end {
		d.end[i] = dueNone
	}
	return d
}

// Slots is the number of remote slots tracked.
func (d *Due) Slots() int { return len(d.end) }

// slotRange returns the table range of rank's slots.
func (d *Due) slotRange(rank int) (lo, hi int) {
	lo = d.first[rank]
	hi = len(d.end)
	if rank+1 < len(d.first) {
		hi = d.first[rank+1]
	}
	return lo, hi
}

// Sent records that (rank, slot)'s TASK left at now with work ns of
// expected compute (0 or less: unknown), rank having exec executor slots.
func (d *Due) Sent(rank, slot int, now, work int64, exec int) {
	lo, hi := d.slotRange(rank)
	i := lo + slot
	if i >= hi {
		return
	}
	running := 0
	for j := lo; j < hi; j++ {
		if d.end[j] != dueNone {
			running++
		}
	}
	d.work[i] = 0
	switch {
	case running < max(exec, 1) && work > 0:
		d.end[i] = now + work
	case running < max(exec, 1):
		d.end[i] = dueUnknown
	default: // behind the running ones
		d.end[i] = dueNone
		d.work[i], d.sentAt[i] = max(work, 1), now
	}
}

// Arrived records that (rank, slot)'s RESULT arrived at now: the
// lateness of a predicted one is observed, and the oldest TASK queued on
// rank starts now.
func (d *Due) Arrived(rank, slot int, now int64) {
	lo, hi := d.slotRange(rank)
	i := lo + slot
	if i >= hi {
		return
	}
	if d.work[i] > 0 { // the model had it queued: it ran beside another
		d.work[i] = 0
		return
	}
	e := d.end[i]
	d.end[i] = dueNone
	if e == dueNone {
		return
	}
	if e >= 0 {
		d.observe(now - e)
	}
	q := -1
	for j := lo; j < hi; j++ {
		if d.work[j] > 0 && (q < 0 || d.sentAt[j] < d.sentAt[q]) {
			q = j
		}
	}
	if q >= 0 {
		d.end[q] = now + d.work[q]
		if d.work[q] <= 1 {
			d.end[q] = dueUnknown
		}
		d.work[q] = 0
	}
}

func (d *Due) observe(l int64) {
	d.obs[d.head] = l
	d.head = (d.head + 1) % DueWindow
	d.nObs = min(d.nObs+1, DueWindow)
	var sorted [DueWindow]int64
	w := sorted[:d.nObs]
	copy(w, d.obs[:d.nObs])
	slices.Sort(w)
	d.late = w[(d.nObs-1)/dueQuantile]
}

// Next returns how long from now until the earliest predicted RESULT
// (negative: overdue by that much); ok is false when no running TASK has
// a prediction.
func (d *Due) Next(now int64) (until int64, ok bool) {
	best := int64(-1)
	for _, e := range d.end {
		if e >= 0 && (best < 0 || e < best) {
			best = e
		}
	}
	if best < 0 {
		return 0, false
	}
	return best + d.late - now, true
}
