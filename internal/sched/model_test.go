package sched

import (
	"container/heap"
	"testing"
	"time"
)

// A discrete-event model of a call, driving the scheduler with a modelled
// clock: the way a program under scripts/ would. Every slot runs batches
// back to back; a root slot pays rootHandoff per batch, a remote slot its
// rank's round trip (overhead) between batches, during which it idles (no
// prefetch). The root's coordinator is not modelled as a bottleneck.

// modelRank describes one rank of the model.
type modelRank struct {
	slots    int
	cost     func(i int) time.Duration // compute of item i on this rank
	overhead time.Duration             // remote: round trip minus compute
	bytes    int64                     // remote: bytes per item of its RESULTs (0: not reported)
}

// modelBatch is one batch the model ran.
type modelBatch struct {
	Batch
	rank, slot int
	at, done   time.Duration // dispatched, completed (root's clock)
	compute    time.Duration
}

type modelRun struct {
	batches  []modelBatch  // in dispatch order
	makespan time.Duration // last completion
	compute  time.Duration // Σ compute over slots
	overhead time.Duration // Σ per-batch overhead over slots
	slots    int
	s        *Scheduler
}

// rootHandoff is the modelled per-batch cost of a root slot's hand-off.
const rootHandoff = 500 * time.Nanosecond

type slotEvent struct {
	at         time.Duration
	rank, slot int
	seq        int
}

type eventQueue []slotEvent

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(slotEvent)) }
func (q *eventQueue) Pop() (x any) { x, *q = (*q)[len(*q)-1], (*q)[:len(*q)-1]; return x }

// runModel runs n items over ranks (rank 0 is the root) with batch size
// batch (0: automatic) and returns what happened.
func runModel(t testing.TB, n, batch int, ranks []modelRank) modelRun {
	t.Helper()
	slots := make([]int, len(ranks))
	for r, mr := range ranks {
		slots[r] = mr.slots
	}
	s, err := New(Config{Items: n, BatchSize: batch, Root: 0, Slots: slots})
	if err != nil {
		t.Fatal(err)
	}
	run := modelRun{s: s}
	var q eventQueue
	seq := 0
	running := map[[2]int]int{} // (rank, slot) → index in run.batches
	for r, mr := range ranks {
		run.slots += mr.slots
		for j := range mr.slots {
			heap.Push(&q, slotEvent{0, r, j, seq})
			seq++
		}
	}
	for q.Len() > 0 {
		ev := heap.Pop(&q).(slotEvent)
		key := [2]int{ev.rank, ev.slot}
		if k, ok := running[key]; ok { // the batch completes now
			delete(running, key)
			b := run.batches[k]
			if ev.rank == 0 {
				err = s.CompleteRootTimed(ev.slot, true, Timing{Compute: b.compute})
			} else {
				err = s.OnResultTimed(ev.rank, ev.slot, b.ID, b.Indices(), true, Timing{Compute: b.compute, RoundTrip: b.done - b.at, Bytes: int64(b.Count) * ranks[ev.rank].bytes})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		var d Decision
		var b Batch
		if ev.rank == 0 {
			d, b, err = s.RootDispatch(ev.slot)
		} else {
			d, b, err = s.OnReady(ev.rank, ev.slot)
		}
		if err != nil {
			t.Fatal(err)
		}
		if d == Stop {
			if s.RankStopped(ev.rank) {
				if err := s.OnDrain(ev.rank); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		mb := modelBatch{Batch: b, rank: ev.rank, slot: ev.slot, at: ev.at}
		for i := b.Start; i < b.End(); i++ {
			mb.compute += ranks[ev.rank].cost(i)
		}
		oh := rootHandoff
		if ev.rank != 0 {
			oh = ranks[ev.rank].overhead
		}
		mb.done = ev.at + oh + mb.compute
		run.compute += mb.compute
		run.overhead += oh
		run.makespan = max(run.makespan, mb.done)
		running[key] = len(run.batches)
		run.batches = append(run.batches, mb)
		heap.Push(&q, slotEvent{mb.done, ev.rank, ev.slot, seq})
		seq++
	}
	if !s.Done() || s.Completed() != n {
		t.Fatalf("model: done %v, %d of %d completed", s.Done(), s.Completed(), n)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	return run
}

// overheadShare is the share of the slots' busy time spent in overhead.
func (m modelRun) overheadShare() float64 {
	return float64(m.overhead) / float64(m.overhead+m.compute)
}

// efficiency is Σ compute / (slots · makespan): 1 when every slot
// computes from start to end.
func (m modelRun) efficiency() float64 {
	return float64(m.compute) / (float64(m.slots) * float64(m.makespan))
}

// sizesOf returns the sizes rank's batches got, in dispatch order.
func (m modelRun) sizesOf(rank int) []int {
	var out []int
	for _, b := range m.batches {
		if b.rank == rank {
			out = append(out, b.Count)
		}
	}
	return out
}

func constCost(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

// uniform returns n ranks of one slot with item cost c, rank 0 the root;
// the others pay overhead o per batch.
func uniform(n int, c, o time.Duration) []modelRank {
	rs := make([]modelRank, n)
	for r := range rs {
		rs[r] = modelRank{slots: 1, cost: constCost(c), overhead: o}
	}
	return rs
}
