package main

import (
	"time"

	"github.com/hataori/hataori-go/internal/sched"
)

// Policy names a batch-size policy and builds the root's dealer for one
// modelled call.
type Policy struct {
	Name string
	// Batch > 0 is a fixed batch size (sched.Config.BatchSize); 0 is the
	// scheduler's automatic sizes, once internal/sched has them.
	Batch int
	// Prefetch gives every remote rank one logical slot more than it has
	// executor slots (the engine's bounded prefetch).
	Prefetch bool
}

func (p Policy) String() string { return p.Name }

// Completion is what the root knows of a finished batch when it records
// it (sched.Timing): Compute is the time the batch's items took on their
// slot, RoundTrip the time from the root sending its TASK to the root
// receiving its RESULT (zero for the root's own slots), Queued the time
// the TASK waited on the remote rank for a free slot.
type Completion struct {
	Compute, RoundTrip, Queued time.Duration
}

// Dealer is the part of the root's scheduler that the model drives: the
// transitions of internal/sched, plus the measured durations that an
// automatic size policy learns from. Every call happens at the modelled
// time now, under the modelled lock.
type Dealer interface {
	OnReady(rank, slot int, now time.Duration) (sched.Decision, sched.Batch, error)
	RootDispatch(slot int, now time.Duration) (sched.Decision, sched.Batch, error)
	OnResult(rank, slot int, b sched.Batch, c Completion, now time.Duration) error
	CompleteRoot(slot int, b sched.Batch, c Completion, now time.Duration) error
	OnDrain(rank int) error
	Done() bool
	Check() error
	Completed() int
	// Prefetch reports whether rank's extra logical slot (the last one)
	// may be answered now; Exhausted whether every later READY gets STOP.
	Prefetch(rank int) bool
	Exhausted() bool
	// Automatic reports whether sizes (and prefetch) are the scheduler's.
	Automatic() bool
}

// NewDealer builds the dealer of policy p for a call of items over slots
// (logical slots per rank), root 0.
func NewDealer(p Policy, items int, slots []int) (Dealer, error) {
	if p.Batch <= 0 {
		return newAutoDealer(items, slots)
	}
	s, err := sched.New(sched.Config{Items: items, BatchSize: p.Batch, Root: 0, Slots: slots})
	if err != nil {
		return nil, err
	}
	return &fixedDealer{s: s}, nil
}

// fixedDealer is the scheduler with a fixed batch size: durations are
// ignored, exactly as the engine does today.
type fixedDealer struct {
	s   *sched.Scheduler
	idx []int64 // reused index buffer for OnResult
}

func (d *fixedDealer) OnReady(rank, slot int, _ time.Duration) (sched.Decision, sched.Batch, error) {
	return d.s.OnReady(rank, slot)
}

func (d *fixedDealer) RootDispatch(slot int, _ time.Duration) (sched.Decision, sched.Batch, error) {
	return d.s.RootDispatch(slot)
}

func (d *fixedDealer) OnResult(rank, slot int, b sched.Batch, _ Completion, _ time.Duration) error {
	d.idx = d.idx[:0]
	for i := b.Start; i < b.End(); i++ {
		d.idx = append(d.idx, int64(i))
	}
	return d.s.OnResult(rank, slot, b.ID, d.idx, true)
}

func (d *fixedDealer) CompleteRoot(slot int, _ sched.Batch, _ Completion, _ time.Duration) error {
	return d.s.CompleteRoot(slot, true)
}

func (d *fixedDealer) Prefetch(int) bool      { return true }
func (d *fixedDealer) Exhausted() bool        { return d.s.Exhausted() }
func (d *fixedDealer) Automatic() bool        { return false }
func (d *fixedDealer) OnDrain(rank int) error { return d.s.OnDrain(rank) }
func (d *fixedDealer) Done() bool             { return d.s.Done() }
func (d *fixedDealer) Check() error           { return d.s.Check() }
func (d *fixedDealer) Completed() int         { return d.s.Completed() }
