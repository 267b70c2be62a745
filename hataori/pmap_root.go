package hataori

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/sched"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// rootLoop is the root's coordinator: the scheduler, the result table and
// the root's own lane.
type rootLoop[T, U any] struct {
	ctx      context.Context
	k        *collective
	sch      *sched.Scheduler
	items    []T
	out      []U
	lane     *batchLane[T, U]
	offloads bool
	rep      *report
	running  sched.Batch // the root lane's batch while Running
	canceled bool
	taskBuf  []byte // the last TASK's memory, reused once its send has returned
}

// runRoot runs the root's side of a call and returns the result table.
func runRoot[T, U any](ctx context.Context, k *collective, exec Executor, items []T, f func(int, T) (U, error), batch int, rep *report) []U {
	sch, err := sched.New(sched.Config{Items: len(items), BatchSize: batch, Ranks: k.size, Root: k.rank})
	if err != nil {
		k.abortProtocol(err.Error())
	}
	r := &rootLoop[T, U]{
		ctx: ctx, k: k, sch: sch, items: items, out: make([]U, len(items)),
		lane: newBatchLane(exec, f), offloads: exec.Offloads(), rep: rep,
	}
	r.loop()
	if err := sch.Check(); err != nil {
		k.abortProtocol(err.Error())
	}
	if pmapRootStats != nil {
		pmapRootStats(sch.Stats())
	}
	if !sch.Failed() && sch.Completed() != len(items) {
		k.abortProtocol(fmt.Sprintf("finished with %d of %d items", sch.Completed(), len(items)))
	}
	return r.out
}

// loop alternates between the root lane's completion and one
// Iprobe-detected message per iteration, swapping their priority each
// time, and backs off when neither made progress.
func (r *rootLoop[T, U]) loop() {
	var b backoff
	localFirst := true
	for !r.sch.Done() {
		r.checkContext()
		if r.sch.State(r.k.rank) == sched.Idle {
			if !r.offloads {
				// MPI-only: the batch will block this goroutine, so first
				// answer everything already waiting.
				for n := 0; n < 2*r.k.size && r.pollRemote(); n++ {
				}
			}
			r.dispatchRoot()
		}
		var progressed bool
		if localFirst {
			progressed = r.pollLocal()
			progressed = r.pollRemote() || progressed
		} else {
			progressed = r.pollRemote()
			progressed = r.pollLocal() || progressed
		}
		localFirst = !localFirst
		if progressed {
			b.reset()
			continue
		}
		// Nothing to do: back off, but wake at once if the root lane ends.
		if b.wait(r.lane.done) {
			r.completeRoot()
			b.reset()
		}
	}
}

func (r *rootLoop[T, U]) checkContext() {
	if r.canceled {
		return
	}
	select {
	case <-r.ctx.Done():
	default:
		return
	}
	r.canceled = true
	r.sch.Fail()
	err := r.ctx.Err()
	r.rep.add(int64(len(r.items)), sched.ClassDrain, KindCanceled, fmt.Sprintf("rank %d: context done: %v", r.k.rank, err), err)
}

// dispatchRoot offers the idle root lane a batch (direct hand-off: the
// lane reads the caller's items and writes into the result table), or
// stops and drains it.
func (r *rootLoop[T, U]) dispatchRoot() {
	d, b, err := r.sch.RootDispatch()
	if err != nil {
		r.k.abortProtocol(err.Error())
	}
	if d == sched.Stop {
		if err := r.sch.OnDrain(r.k.rank); err != nil {
			r.k.abortProtocol(err.Error())
		}
		tracef("root-drain")
		return
	}
	r.running = b
	tracef("root-batch-start batch=%d", b.ID)
	r.lane.start(r.items[b.Start:b.End()], r.out[b.Start:b.End()])
}

func (r *rootLoop[T, U]) pollLocal() bool {
	select {
	case <-r.lane.done:
		r.completeRoot()
		return true
	default:
		return false
	}
}

func (r *rootLoop[T, U]) completeRoot() {
	r.lane.finish(r.k)
	b := r.running
	tracef("root-batch-done batch=%d", b.ID)
	ok := r.lane.errIdx < 0
	if !ok {
		i := b.Start + r.lane.errIdx
		r.rep.add(int64(i), sched.ClassUser, KindUser, errmsg.Bound(r.lane.err.Error()), r.lane.err)
		r.lane.err = nil
	}
	if err := r.sch.CompleteRoot(ok); err != nil {
		r.k.abortProtocol(err.Error())
	}
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
		r.malformed(from, we)
		return true
	}
	if from == r.k.rank || h.Kind != expectedKind(r.sch.State(from)) {
		r.k.abortProtocol(fmt.Sprintf("%v from rank %d in lane state %v", h.Kind, from, r.sch.State(from)))
	}
	switch h.Kind {
	case wire.KindReady:
		r.onReady(from, h)
	case wire.KindResult:
		tracef("recv-result rank=%d bytes=%d", from, len(payload))
		r.onResult(from, h, payload)
	case wire.KindDrain:
		if err := r.sch.OnDrain(from); err != nil {
			r.k.abortProtocol(err.Error())
		}
		tracef("recv-drain rank=%d", from)
	}
	return true
}

// malformed handles a frame from rank that failed to parse. Its meaning
// follows from the lane state (the only message the rank may send there):
// a RESULT fails the pinned running batch, a READY is answered with STOP,
// a DRAIN still drains; in each case a wire error is recorded.
func (r *rootLoop[T, U]) malformed(from int, we *wire.Error) {
	msg := fmt.Sprintf("rank %d: malformed frame from rank %d: %v", r.k.rank, from, we)
	switch r.sch.State(from) {
	case sched.Running:
		b, err := r.sch.FailRunning(from)
		if err != nil {
			r.k.abortProtocol(err.Error())
		}
		r.rep.add(int64(b.Start), sched.ClassWire, KindWire, msg, we)
	case sched.Idle:
		r.sch.Fail()
		r.rep.add(int64(len(r.items)), sched.ClassWire, KindWire, msg, we)
		r.onReady(from, wire.Header{})
	case sched.StopReceived:
		r.rep.add(int64(len(r.items)), sched.ClassWire, KindWire, msg, we)
		if err := r.sch.OnDrain(from); err != nil {
			r.k.abortProtocol(err.Error())
		}
	default:
		r.k.abortProtocol(msg)
	}
}

func (r *rootLoop[T, U]) onReady(from int, h wire.Header) {
	switch h.Status {
	case statusOK:
	case statusCanceled:
		r.sch.Fail() // the rank itself reports the cancellation
	default:
		r.k.abortProtocol(fmt.Sprintf("READY from rank %d with status %d", from, h.Status))
	}
	d, b, err := r.sch.OnReady(from)
	if err != nil {
		r.k.abortProtocol(err.Error())
	}
	if d == sched.Assign {
		buf, err := taskFrame(r.taskBuf, b.ID, b.Start, r.items[b.Start:b.End()])
		if err == nil {
			r.send(from, buf, "TASK") // a blocking send: buf is free again when it returns
			r.taskBuf = buf
			return
		}
		// The items cannot travel: fail the batch and answer STOP.
		r.rep.add(int64(b.Start), sched.ClassWire, KindWire, fmt.Sprintf("rank %d: encoding batch %d for rank %d: %v", r.k.rank, b.ID, from, err), err)
		if _, err := r.sch.FailRunning(from); err != nil {
			r.k.abortProtocol(err.Error())
		}
		if d, _, err = r.sch.OnReady(from); err != nil || d != sched.Stop {
			r.k.abortProtocol(fmt.Sprintf("no STOP after a failed TASK encoding: %v", err))
		}
	}
	r.send(from, stopFrame(len(r.items)), "STOP")
}

func (r *rootLoop[T, U]) send(to int, buf []byte, what string) {
	tracef("send kind=%s to=%d bytes=%d", what, to, len(buf))
	if err := r.k.sendFrame(to, tagPmap, buf); err != nil {
		r.k.abortTransport(err)
	}
}

// onResult validates a RESULT fully before anything changes, then decodes
// the results into the table (unless the call already failed, in which
// case they are discarded) and completes the lane. payload is the frame
// recvFrame received for this message alone, so bulk results alias it
// instead of being copied out (wire.DecodeItemsOwned).
func (r *rootLoop[T, U]) onResult(from int, h wire.Header, payload []byte) {
	pinned, _ := r.sch.RunningBatch(from)
	indices, rest, err := splitIndices(h, payload)
	if err != nil {
		r.failRunning(from, KindWire, fmt.Sprintf("rank %d: RESULT of batch %d from rank %d: %v", r.k.rank, pinned.ID, from, err), err)
		return
	}
	id := int64(-1)
	if h.BatchID <= math.MaxInt64 {
		id = int64(h.BatchID)
	}
	if err := r.sch.ValidateResult(from, id, indices); err != nil || h.Status > statusWire {
		if err == nil {
			err = fmt.Errorf("unknown RESULT status %d", h.Status)
		}
		r.failRunning(from, KindProtocol, fmt.Sprintf("rank %d: RESULT from rank %d: %v", r.k.rank, from, err), err)
		return
	}
	ok := h.Status == statusOK
	if ok && !r.sch.Failed() {
		vals, err := wire.DecodeItemsOwned[U](rest, len(indices))
		if err != nil {
			ok = false
			r.rep.add(int64(pinned.Start), sched.ClassWire, KindWire,
				fmt.Sprintf("rank %d: decoding the results of batch %d from rank %d: %v", r.k.rank, pinned.ID, from, err), err)
		} else {
			copy(r.out[pinned.Start:pinned.End()], vals)
		}
	}
	if err := r.sch.OnResult(from, id, indices, ok); err != nil {
		r.k.abortProtocol(err.Error())
	}
}

func (r *rootLoop[T, U]) failRunning(from int, kind PmapErrorKind, msg string, err error) {
	b, ferr := r.sch.FailRunning(from)
	if ferr != nil {
		r.k.abortProtocol(ferr.Error())
	}
	r.rep.add(int64(b.Start), sched.ClassWire, kind, msg, err)
}

// expectedKind is the only message a remote lane may send in state s.
func expectedKind(s sched.State) wire.Kind {
	switch s {
	case sched.Idle:
		return wire.KindReady
	case sched.Running:
		return wire.KindResult
	case sched.StopReceived:
		return wire.KindDrain
	}
	return 0
}
