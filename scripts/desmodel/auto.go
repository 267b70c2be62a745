package main

import (
	"time"

	"github.com/hataori/hataori-go/internal/sched"
)

// autoDealer is the scheduler's automatic batch sizes (Config.BatchSize
// 0): every completion reports its sched.Timing, and a remote rank's
// extra logical slot is answered only once sched says its round trip is
// worth overlapping (Prefetch) or the input is exhausted.
type autoDealer struct {
	s   *sched.Scheduler
	idx []int64
}

func newAutoDealer(items int, slots []int) (Dealer, error) {
	s, err := sched.New(sched.Config{Items: items, BatchSize: 0, Root: 0, Slots: slots})
	if err != nil {
		return nil, err
	}
	return &autoDealer{s: s}, nil
}

func timing(c Completion) sched.Timing {
	return sched.Timing{Compute: c.Compute, RoundTrip: c.RoundTrip, Queued: c.Queued}
}

func (d *autoDealer) OnReady(rank, slot int, _ time.Duration) (sched.Decision, sched.Batch, error) {
	return d.s.OnReady(rank, slot)
}

func (d *autoDealer) RootDispatch(slot int, _ time.Duration) (sched.Decision, sched.Batch, error) {
	return d.s.RootDispatch(slot)
}

func (d *autoDealer) OnResult(rank, slot int, b sched.Batch, c Completion, _ time.Duration) error {
	d.idx = d.idx[:0]
	for i := b.Start; i < b.End(); i++ {
		d.idx = append(d.idx, int64(i))
	}
	return d.s.OnResultTimed(rank, slot, b.ID, d.idx, true, timing(c))
}

func (d *autoDealer) CompleteRoot(slot int, _ sched.Batch, c Completion, _ time.Duration) error {
	return d.s.CompleteRootTimed(slot, true, timing(c))
}

func (d *autoDealer) OnDrain(rank int) error { return d.s.OnDrain(rank) }
func (d *autoDealer) Done() bool             { return d.s.Done() }
func (d *autoDealer) Check() error           { return d.s.Check() }
func (d *autoDealer) Completed() int         { return d.s.Completed() }
func (d *autoDealer) Prefetch(rank int) bool { return d.s.Prefetch(rank) }
func (d *autoDealer) Exhausted() bool        { return d.s.Exhausted() }
func (d *autoDealer) Automatic() bool        { return true }
