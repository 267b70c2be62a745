package hataori

import "time"

// dueTracker times the root coordinator's polls on a rank whose every CPU
// computes (no spare CPU), where each timed wake-up of the coordinator
// costs its core's slot about 10 µs here: rather than wake every back-off
// step, the coordinator sleeps until the next remote RESULT is due, then
// polls briefly for it, so that a remote slot gets its next TASK a few
// microseconds after it finished rather than at the coordinator's next
// back-off step (and the root's slot loses one wake-up per remote batch
// instead of several). It still wakes at least every backoffMax, so no
// message waits longer than the poll interval.
//
// It keeps, per remote slot, when its TASK was sent, and an estimate of
// the time from TASK to RESULT: the lowest seen over the last window of
// RESULTs (the coordinator sees a RESULT only when it polls, so an
// observation is the true time or later). It is used only when at most
// dueSlots remote slots take part. Coordinator only.
type dueTracker struct {
	first []int   // per rank, the index of its slot 0 in sent
	sent  []int64 // per remote slot: when its TASK was sent (ns since the call's start), -1: none
	cycle int64   // estimated TASK→RESULT time in ns (0: none measured yet)
	low   int64   // the lowest observation of the current window
	seen  int     // observations in the current window
}

const (
	dueWindow = 32
	dueSlots  = 16
)

// dueEarly is how much before a RESULT is due the coordinator wakes (its
// timer's latency); dueSpin is how long past that it polls without
// sleeping (ended by the RESULT).
var (
	dueEarly = 3 * time.Microsecond
	dueSpin  = 10 * time.Microsecond
)

func newDueTracker(slots []int, root int) dueTracker {
	d := dueTracker{first: make([]int, len(slots))}
	n := 0
	for r, s := range slots {
		d.first[r] = n
		if r != root {
			n += s
		}
	}
	if n > 0 && n <= dueSlots {
		d.sent = make([]int64, n)
		for i := range d.sent {
			d.sent[i] = -1
		}
	}
	return d
}

// active reports whether the tracker tracks anything (a zero tracker, or
// one with no or too many remote slots, does not).
func (d *dueTracker) active() bool { return len(d.sent) > 0 }

// taskSent records that (rank, slot)'s TASK left at now.
func (d *dueTracker) taskSent(rank, slot int, now int64) {
	if d.active() {
		d.sent[d.first[rank]+slot] = now
	}
}

// resultIn records that (rank, slot)'s RESULT was received at now.
func (d *dueTracker) resultIn(rank, slot int, now int64) {
	if !d.active() {
		return
	}
	i := d.first[rank] + slot
	t := d.sent[i]
	if t < 0 {
		return
	}
	d.sent[i] = -1
	c := now - t
	if d.seen == 0 || c < d.low {
		d.low = c
	}
	if d.cycle == 0 || c < d.cycle {
		d.cycle = c
	}
	if d.seen++; d.seen == dueWindow {
		// Aim a little early, so that the next window can see a RESULT
		// that comes sooner than the estimate (a poll at the estimated
		// time would only ever confirm it).
		d.cycle, d.seen = d.low-d.low/16, 0
	}
}

// next returns how long from now until the earliest outstanding RESULT is
// due (negative: overdue by that much); ok is false when none is
// outstanding or no estimate exists yet.
func (d *dueTracker) next(now int64) (until time.Duration, ok bool) {
	if !d.active() || d.cycle == 0 {
		return 0, false
	}
	best := int64(-1)
	for _, t := range d.sent {
		if t >= 0 && (best < 0 || t < best) {
			best = t
		}
	}
	if best < 0 {
		return 0, false
	}
	return time.Duration(best + d.cycle - now), true
}
