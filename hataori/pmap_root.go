package hataori

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/sched"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// rootLoop is the root's side of one call: the scheduler, the result table,
// the root's own slots and the coordinator that answers the other ranks.
//
// The scheduler is shared: the root's slots take their next batch from it
// themselves, under mu, the moment they finish one (a direct hand-off: the
// slot reads the caller's items and writes into the result table, with no
// coordinator round trip, no serialization and no MPI), while the
// coordinator goroutine, which alone makes MPI calls, applies the other
// ranks' messages to it under the same lock. So the root's own work never
// keeps a remote READY waiting: the coordinator is never the one computing.
type rootLoop[T, U any] struct {
	ctx         context.Context
	k           *collective
	items       []T
	out         []U
	f           func(int, T) (U, error)
	stopOnError bool
	spare       bool
	rep         *report
	pan         *panicSlot

	mu        sync.Mutex
	sch       *sched.Scheduler
	slots     int // the root's own slots
	stopped   int // root slots that got STOP
	finished  chan struct{}
	closed    bool   // finished is closed
	canceled  bool   // this rank's ctx ended and was reported
	fatal     string // an internal failure seen on a slot, for the coordinator to abort with
	inlineRun slotRun

	taskBuf []byte // the last TASK's memory, reused once its send has returned
}

// slotRun is what a root slot carries from one batch to the next.
type slotRun struct {
	have bool
	b    sched.Batch
	o    batchOutcome
	done bool // the slot got STOP
}

// runRoot runs the root's side of a call and returns the result table.
// slots[r] is rank r's slot count; with inline, the coordinator evaluates
// the root's only slot itself (MPI-only at MPI_THREAD_SINGLE).
func runRoot[T, U any](c *call[T, U], slots []int, pending []pendingReady, start func(serve func(int))) []U {
	k := c.k
	sch, err := sched.New(sched.Config{Items: len(c.items), BatchSize: c.batch, Root: k.rank, Slots: slots})
	if err != nil {
		start(nil)
		k.abortProtocol(err.Error())
	}
	r := &rootLoop[T, U]{
		ctx: c.ctx, k: k, items: c.items, out: make([]U, len(c.items)), f: c.f,
		stopOnError: c.stopOnError, spare: c.spare, rep: c.rep, pan: c.pan,
		sch: sch, slots: slots[k.rank], finished: make(chan struct{}),
	}
	if c.inline {
		start(nil)
	} else {
		start(r.serve)
	}
	for _, p := range pending {
		r.onReady(p.rank, 0, p.status)
	}
	r.loop(c.inline)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal != "" {
		k.abortProtocol(r.fatal)
	}
	if err := sch.Check(); err != nil {
		k.abortProtocol(err.Error())
	}
	st := sch.Stats()
	c.stats = &st
	if !sch.Failed() && sch.Completed() != len(c.items) {
		k.abortProtocol(fmt.Sprintf("finished with %d of %d items", sch.Completed(), len(c.items)))
	}
	return r.out
}

// serve is the loop of root slot s, on that slot's goroutine.
func (r *rootLoop[T, U]) serve(s int) {
	var run slotRun
	for r.step(s, &run) {
	}
}

// step completes run's batch (if any), takes the slot's next one and
// evaluates it; it reports false once the slot has stopped (or a callback
// panicked: the coordinator aborts the job).
func (r *rootLoop[T, U]) step(s int, run *slotRun) bool {
	if !r.next(s, run) {
		return false
	}
	b := run.b
	tracef("root-batch-start slot=%d batch=%d", s, b.ID)
	o, ok := evalBatch(r.f, s, r.items[b.Start:b.End()], r.out[b.Start:b.End()], r.stopOnError, r.pan)
	tracef("root-batch-done slot=%d batch=%d", s, b.ID)
	run.o = o
	return ok
}

// next records the outcome of run's batch and dispatches slot s again, under
// the scheduler lock. It reports false when the slot got STOP; the last of
// the root's slots to stop drains the root.
func (r *rootLoop[T, U]) next(s int, run *slotRun) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if run.done {
		return false
	}
	if run.have {
		run.have = false
		if o := run.o; o.errIdx >= 0 {
			i := run.b.Start + o.errIdx
			r.rep.add(int64(i), sched.ClassUser, KindUser, errmsg.Bound(o.err.Error()), o.err)
		}
		if err := r.sch.CompleteRoot(s, run.o.errIdx < 0); err != nil {
			r.setFatal(err)
			return false
		}
	}
	d, b, err := r.sch.RootDispatch(s)
	if err != nil {
		r.setFatal(err)
		return false
	}
	if d == sched.Stop {
		run.done = true
		r.stopped++
		if r.stopped == r.slots {
			if err := r.sch.OnDrain(r.k.rank); err != nil {
				r.setFatal(err)
				return false
			}
			tracef("root-drain")
		}
		r.checkFinished()
		return false
	}
	run.have, run.b = true, b
	return true
}

// setFatal records an internal failure seen off the coordinator (called
// under mu) and wakes the coordinator, which aborts the job.
func (r *rootLoop[T, U]) setFatal(err error) {
	if r.fatal == "" {
		r.fatal = err.Error()
	}
	r.pan.nudge()
	r.closeFinished()
}

// checkFinished closes finished once every rank has drained (under mu).
func (r *rootLoop[T, U]) checkFinished() {
	if r.sch.Done() {
		r.closeFinished()
	}
}

func (r *rootLoop[T, U]) closeFinished() {
	if !r.closed {
		r.closed = true
		close(r.finished)
	}
}

// loop is the coordinator: it services one Iprobe-detected message per
// round, checks the context and the slots' panics, and backs off when
// idle; it returns once every rank has drained. At world size one it just
// waits.
func (r *rootLoop[T, U]) loop(inline bool) {
	var b backoff
	ready := func() bool {
		select {
		case <-r.finished:
			return true
		default:
			return false
		}
	}
	for {
		r.pan.check(r.k)
		r.checkContext()
		select {
		case <-r.finished:
			return
		default:
		}
		if r.k.size == 1 && !inline {
			ctxDone := r.ctx.Done()
			if r.ctx.Err() != nil {
				ctxDone = nil // already reported by checkContext
			}
			select {
			case <-r.finished:
			case <-r.pan.wake:
			case <-ctxDone:
			}
			continue
		}
		progressed := r.pollRemote()
		if inline && !progressed && !r.inlineRun.done {
			// MPI-only at MPI_THREAD_SINGLE: the batch blocks this
			// goroutine, so first answer everything already waiting.
			for n := 0; n < 2*r.k.size && r.pollRemote(); n++ {
			}
			r.step(0, &r.inlineRun)
			progressed = true
		}
		if progressed {
			b.reset()
			continue
		}
		b.wait(r.spare, ready, r.pan.wake)
	}
}

// checkContext turns the end of ctx into a call-level failure, once.
func (r *rootLoop[T, U]) checkContext() {
	select {
	case <-r.ctx.Done():
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.canceled {
		return
	}
	r.canceled = true
	r.sch.Fail()
	err := r.ctx.Err()
	r.rep.add(int64(len(r.items)), sched.ClassDrain, KindCanceled, fmt.Sprintf("rank %d: context done: %v", r.k.rank, err), err)
}

// pollRemote services at most one waiting scheduler message.
func (r *rootLoop[T, U]) pollRemote() bool {
	if r.k.size == 1 {
		return false
	}
	ok, src, err := r.k.iprobe(tagPmap)
	if err != nil {
		r.k.abortTransport(err)
	}
	if !ok {
		return false
	}
	h, payload, from, err := r.k.recvFrame(src, tagPmap)
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) || from < 0 || from >= r.k.size {
			r.k.abortTransport(err)
		}
		r.malformed(from, int(h.Slot), we)
		return true
	}
	s := int(h.Slot)
	if from == r.k.rank || s >= r.sch.SlotCount(from) {
		r.k.abortProtocol(fmt.Sprintf("%v from rank %d slot %d (of %d)", h.Kind, from, s, r.sch.SlotCount(from)))
	}
	switch h.Kind {
	case wire.KindReady:
		r.onReady(from, s, h.Status)
	case wire.KindResult:
		tracef("recv-result rank=%d slot=%d bytes=%d", from, s, len(payload))
		r.onResult(from, s, h, payload)
	case wire.KindDrain:
		r.locked(func() error { return r.sch.OnDrain(from) })
		tracef("recv-drain rank=%d", from)
	default:
		r.k.abortProtocol(fmt.Sprintf("%v from rank %d", h.Kind, from))
	}
	return true
}

// locked applies one transition under mu; a protocol error aborts.
func (r *rootLoop[T, U]) locked(f func() error) {
	r.mu.Lock()
	err := f()
	if err == nil {
		r.checkFinished()
	}
	r.mu.Unlock()
	if err != nil {
		r.k.abortProtocol(err.Error())
	}
}

// malformed handles a frame from (rank, slot) that failed to parse. Its
// meaning follows from the slot's state (the only message the slot may send
// there): a RESULT fails the pinned running batch, a READY is answered with
// STOP, a DRAIN still drains; in each case a wire error is recorded. The
// slot number is read from the raw header; one outside the rank's slots
// cannot be attributed and aborts.
func (r *rootLoop[T, U]) malformed(from, s int, we *wire.Error) {
	msg := fmt.Sprintf("rank %d: malformed frame from rank %d: %v", r.k.rank, from, we)
	r.mu.Lock()
	state, slots := r.sch.State(from, s), r.sch.SlotCount(from)
	allStopped := true
	for i := range slots {
		allStopped = allStopped && r.sch.State(from, i) == sched.StopReceived
	}
	r.mu.Unlock()
	switch {
	case s < slots && state == sched.Running:
		var b sched.Batch
		r.locked(func() (err error) {
			b, err = r.sch.FailRunning(from, s)
			return err
		})
		r.addLocked(int64(b.Start), sched.ClassWire, KindWire, msg, we)
	case s < slots && state == sched.Idle:
		r.mu.Lock()
		r.sch.Fail()
		r.mu.Unlock()
		r.addLocked(int64(len(r.items)), sched.ClassWire, KindWire, msg, we)
		r.onReady(from, s, statusOK)
	case allStopped && slots > 0:
		r.addLocked(int64(len(r.items)), sched.ClassWire, KindWire, msg, we)
		r.locked(func() error { return r.sch.OnDrain(from) })
	default:
		r.k.abortProtocol(msg)
	}
}

func (r *rootLoop[T, U]) addLocked(taskKey int64, class sched.Class, kind PmapErrorKind, msg string, err error) {
	r.mu.Lock()
	r.rep.add(taskKey, class, kind, msg, err)
	r.mu.Unlock()
}

// onReady answers a READY from (rank, slot) with a TASK or a STOP. The
// TASK is encoded and sent outside the lock, so the root's slots keep
// taking batches meanwhile.
func (r *rootLoop[T, U]) onReady(from, s int, status uint8) {
	switch status {
	case statusOK:
	case statusCanceled:
		r.mu.Lock()
		r.sch.Fail() // the rank itself reports the cancellation
		r.mu.Unlock()
	default:
		r.k.abortProtocol(fmt.Sprintf("READY from rank %d with status %d", from, status))
	}
	var d sched.Decision
	var b sched.Batch
	r.locked(func() (err error) {
		d, b, err = r.sch.OnReady(from, s)
		return err
	})
	if d == sched.Assign {
		buf, err := taskFrame(r.taskBuf, b.ID, b.Start, r.items[b.Start:b.End()])
		if err == nil {
			r.send(from, withSlot(buf, s), "TASK") // a blocking send: buf is free again when it returns
			r.taskBuf = buf
			debugTaskSent()
			return
		}
		// The items cannot travel: fail the batch and answer STOP.
		r.addLocked(int64(b.Start), sched.ClassWire, KindWire, fmt.Sprintf("rank %d: encoding batch %d for rank %d: %v", r.k.rank, b.ID, from, err), err)
		r.locked(func() error {
			if _, err := r.sch.FailRunning(from, s); err != nil {
				return err
			}
			if d, _, err := r.sch.OnReady(from, s); err != nil || d != sched.Stop {
				return fmt.Errorf("no STOP after a failed TASK encoding: %v", err)
			}
			return nil
		})
	}
	r.send(from, withSlot(stopFrame(len(r.items)), s), "STOP")
}

func (r *rootLoop[T, U]) send(to int, buf []byte, what string) {
	tracef("send kind=%s to=%d bytes=%d", what, to, len(buf))
	if err := r.k.sendFrame(to, tagPmap, buf); err != nil {
		r.k.abortTransport(err)
	}
}

// onResult validates a RESULT fully before anything changes, then decodes
// the results into the table (unless the call already failed, in which
// case they are discarded) and completes the slot. payload is the frame
// recvFrame received for this message alone, so bulk results alias it
// instead of being copied out (wire.DecodeItemsOwned). Decoding runs outside
// the lock: the batch's window of the table belongs to it alone.
func (r *rootLoop[T, U]) onResult(from, s int, h wire.Header, payload []byte) {
	r.mu.Lock()
	pinned, _ := r.sch.RunningBatch(from, s)
	r.mu.Unlock()
	indices, rest, err := splitIndices(h, payload)
	if err != nil {
		r.failRunning(from, s, KindWire, fmt.Sprintf("rank %d: RESULT of batch %d from rank %d: %v", r.k.rank, pinned.ID, from, err), err)
		return
	}
	id := int64(-1)
	if h.BatchID <= math.MaxInt64 {
		id = int64(h.BatchID)
	}
	r.mu.Lock()
	err = r.sch.ValidateResult(from, s, id, indices)
	failed := r.sch.Failed()
	r.mu.Unlock()
	if err != nil || h.Status > statusWire {
		if err == nil {
			err = fmt.Errorf("unknown RESULT status %d", h.Status)
		}
		r.failRunning(from, s, KindProtocol, fmt.Sprintf("rank %d: RESULT from rank %d: %v", r.k.rank, from, err), err)
		return
	}
	ok := h.Status == statusOK
	if ok && !failed {
		vals, err := wire.DecodeItemsOwned[U](rest, len(indices))
		if err != nil {
			ok = false
			r.addLocked(int64(pinned.Start), sched.ClassWire, KindWire,
				fmt.Sprintf("rank %d: decoding the results of batch %d from rank %d: %v", r.k.rank, pinned.ID, from, err), err)
		} else {
			copy(r.out[pinned.Start:pinned.End()], vals)
		}
	}
	r.locked(func() error { return r.sch.OnResult(from, s, id, indices, ok) })
	debugResultReceived()
}

func (r *rootLoop[T, U]) failRunning(from, s int, kind PmapErrorKind, msg string, err error) {
	var b sched.Batch
	r.locked(func() (ferr error) {
		b, ferr = r.sch.FailRunning(from, s)
		return ferr
	})
	r.addLocked(int64(b.Start), sched.ClassWire, kind, msg, err)
}
