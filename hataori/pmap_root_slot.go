package hataori

import (
	"fmt"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/internal/sched"
)

// The root's slots: what each of them runs on its own goroutine (serve),
// taking its next batch from the scheduler itself, under the scheduler
// lock, without waiting for the coordinator (pmap_root.go). With an inline
// slot (MPI_THREAD_SINGLE) the coordinator runs the same rounds itself
// (runInline).

// serve is the loop of root slot s, on that slot's goroutine.
func (r *rootLoop[T, U]) serve(s int) {
	if r.timing {
		r.meters[s].begin = time.Since(r.c.t0)
	}
	var run slotRun
	if r.first != nil {
		if run = r.first[s]; run.have && !r.runBatch(s, &run) {
			return
		}
	}
	for r.next(s, &run) && r.runBatch(s, &run) {
	}
}

// runInline is the inline slot 0's turn on the coordinator
// (MPI_THREAD_SINGLE, MPI-only: the coordinator runs the batches itself,
// between messages): it completes the previous batch, takes the next one
// and runs it, like one round of serve. It reports false once the slot has
// stopped (or a callback panicked).
func (r *rootLoop[T, U]) runInline() bool {
	return r.next(0, &r.inlineRun) && r.runBatch(0, &r.inlineRun)
}

// runBatch evaluates run's batch on slot s (the slot's goroutine, or the
// coordinator for the inline slot) and keeps its outcome in run for next.
// It touches only run and slot s's meters. It reports false when a
// callback panicked: the coordinator aborts the job.
func (r *rootLoop[T, U]) runBatch(s int, run *slotRun) bool {
	b := run.b
	tracef("root-batch-start slot=%d batch=%d", s, b.ID)
	r.computing.Add(1)
	t0 := time.Now()
	o, ok := evalBatch(r.c.cctx, r.c.f, s, int64(b.Start), r.store.items(b), r.store.results(b), r.c.stopRule(), r.pan)
	t1 := time.Now()
	r.computing.Add(-1)
	if r.spans {
		m := &r.meters[s]
		m.spans = append(m.spans, BatchSpan{Rank: r.k.Rank, Slot: s, Batch: b.ID, Start: b.Start, Count: b.Count, Begin: t0.Sub(r.c.t0), End: t1.Sub(r.c.t0)})
	}
	tracef("root-batch-done slot=%d batch=%d", s, b.ID)
	run.o, run.t = o, sched.Timing{Compute: t1.Sub(t0)}
	return ok
}

// next records the outcome of run's batch and dispatches slot s again, under
// the scheduler lock. It reports false when the slot got STOP; the last of
// the root's slots to stop drains the root.
func (r *rootLoop[T, U]) next(s int, run *slotRun) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run.stopped {
		return false
	}
	if run.have {
		run.have = false
		ok := r.recordRoot(run.b, &run.o)
		if err := r.sch.CompleteRootTimed(s, ok, run.t); err != nil {
			r.setFatal(err)
			return false
		}
		r.store.completed(run.b, ok)
		r.finished.Add(int64(run.b.Count))
		r.noteFailed()
	}
	d, b, err := r.sch.RootDispatch(s)
	for d == sched.Wait && err == nil {
		// A stream with no item available yet: wait for the reader (on
		// a slot's goroutine), or come back next round (inline).
		if s == 0 && r.c.inline {
			return false
		}
		r.store.awaitMore()
		d, b, err = r.sch.RootDispatch(s)
	}
	if err != nil {
		r.setFatal(err)
		return false
	}
	if d == sched.Assign {
		r.store.assigned(b)
	}
	r.noteFailed() // the dispatch may have exhausted the input (held READYs)
	if d == sched.Stop {
		run.stopped = true
		if r.timing {
			r.meters[s].end = time.Since(r.c.t0)
		}
		r.stopped++
		if r.stopped == r.slots {
			if err := r.sch.OnDrain(r.k.Rank); err != nil {
				r.setFatal(err)
				return false
			}
			tracef("root-drain")
		}
		r.checkDrained()
		return false
	}
	run.have, run.b = true, b
	return true
}

// recordRoot reports the failing items of a batch a root slot ran (under
// mu) and returns whether the batch completes without failing the call:
// under FailFast only a batch without a failing item; under CollectAll
// every batch (each failed item goes to the list).
func (r *rootLoop[T, U]) recordRoot(b sched.Batch, o *batchOutcome) bool {
	if len(o.faults) == 0 {
		return true
	}
	me := r.k.Rank
	if !r.c.collect {
		f := o.first()
		i := b.Start + f.pos
		if f.canceled {
			r.rep.addCall(canceledKey(int(r.n)), sched.ClassDrain, KindCanceled, canceledMessage(me, i, f.err), f.err)
		} else {
			r.rep.addItem(i, sched.ClassUser, KindUser, errmsg.Bound(f.err.Error()), f.err)
		}
		r.failed.Add(1)
		return false
	}
	for _, f := range o.faults {
		i := b.Start + f.pos
		kind, msg := KindUser, errmsg.Bound(f.err.Error())
		if f.canceled {
			kind, msg = KindCanceled, canceledMessage(me, i, f.err)
		} else {
			r.rep.addItem(i, sched.ClassUser, KindUser, msg, f.err)
		}
		r.note(ItemFailure{Index: i, Kind: kind, Rank: me, Message: msg, err: f.err})
	}
	r.failed.Add(int64(len(o.faults)))
	return true
}

// canceledKey is the task key of an item that failed with the call's own
// cancellation: one past the call-level key N, so that it loses to the
// failure (or the cancellation) that stopped the call on any rank.
func canceledKey(n int) int64 { return int64(n) + 1 }

// canceledMessage is the message of an item that failed with the call's own
// cancellation.
func canceledMessage(rank, index int, err error) string {
	return errmsg.Bound(fmt.Sprintf("rank %d: item %d stopped by the call's cancellation: %v", rank, index, err))
}
