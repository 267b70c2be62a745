package hataori

import (
	"errors"
	"fmt"
	"math"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/sched"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// remoteLoop is a non-root rank's side of one call. Towards the root the
// rank has logical slots: one per slot of its executor, plus one with
// bounded prefetch. Each logical slot sends READY, gets a TASK (whose
// RESULT it sends) or STOP; once every logical slot has stopped and every
// RESULT is sent, the rank sends its one DRAIN. TASKs go into one queue
// that the executor's slots take from, so with prefetch a slot that
// finishes a batch starts the prefetched one without a round trip; at most
// one batch waits beyond the running ones (the protocol bounds the batches
// a rank holds to its logical slots). The coordinator (the calling
// goroutine) makes every MPI call; a slot decodes its TASK, runs the
// callbacks and encodes its RESULT on its own goroutine, so the
// coordinator stays free to answer.
type remoteLoop[T, U any] struct {
	c       *call[T, U]
	k       *collective
	w       *sched.Worker
	slots   int            // the executor's slots
	logical int            // slots towards the root: slots, plus one with prefetch
	jobs    chan remoteJob // capacity logical; closed once every logical slot stopped
	closed  bool
	results chan slotResult // capacity logical: a finished slot never waits
	free    chan []byte     // RESULT frames already sent, for reuse
	held    int             // TASKs received whose RESULT is not yet sent

	stopN     int64 // the input length, from the first STOP
	canceled  bool
	cancelErr error
	scratch   []byte // the last RESULT's memory (inline mode)
}

// remoteJob is one TASK for a logical slot; payload is owned by the job.
type remoteJob struct {
	slot    int // the logical slot it answers
	h       wire.Header
	id      int64
	payload []byte
}

// slotResult is a slot's RESULT frame, with the error it reports (if any)
// for the coordinator to record.
type slotResult struct {
	slot  int
	frame []byte
	fault *rankFault
}

// rankFault is an error this rank reports for the final convergence.
type rankFault struct {
	key   int64
	class sched.Class
	kind  PmapErrorKind
	msg   string
	err   error
}

// runRemote runs a non-root rank's side of a call.
func runRemote[T, U any](c *call[T, U], slots int, start func(serve func(int))) {
	logical := slots
	if c.prefetch && !c.inline {
		logical++
	}
	r := &remoteLoop[T, U]{
		c: c, k: c.k, w: sched.NewWorker(c.k.rank, logical), slots: slots, logical: logical,
		jobs: make(chan remoteJob, logical), results: make(chan slotResult, logical),
		free: make(chan []byte, logical),
	}
	defer r.closeJobs()
	if c.inline {
		start(nil)
	} else {
		start(r.serve)
	}
	for s := range logical {
		r.sendReady(s)
	}
	r.loop()
	step(r.k, r.w.SendDrain())
	r.send(emptyFrame(wire.KindDrain, statusOK))
	if r.canceled {
		c.rep.add(r.stopN, sched.ClassDrain, KindCanceled, fmt.Sprintf("rank %d: context done: %v", r.k.rank, r.cancelErr), r.cancelErr)
	}
}

// closeJobs closes the job queue once, so that every slot's loop returns
// (after the last STOP, or however the coordinator leaves).
func (r *remoteLoop[T, U]) closeJobs() {
	if !r.closed {
		r.closed = true
		close(r.jobs)
	}
}

// serve is the loop of slot s, on that slot's goroutine: it takes the next
// TASK of any logical slot and runs it.
func (r *remoteLoop[T, U]) serve(s int) {
	for j := range r.jobs {
		var scratch []byte
		select {
		case scratch = <-r.free:
		default:
		}
		res, ok := r.runTask(s, j, scratch)
		if !ok {
			return // a callback panicked: the coordinator aborts the job
		}
		r.results <- res
	}
}

func (r *remoteLoop[T, U]) send(buf []byte) {
	if err := r.k.sendFrame(r.c.root, tagPmap, buf); err != nil {
		r.k.abortTransport(err)
	}
}

// sendReady sends slot s's READY (marked canceled once ctx has ended).
func (r *remoteLoop[T, U]) sendReady(s int) {
	if !r.canceled {
		if err := r.c.ctx.Err(); err != nil {
			r.canceled, r.cancelErr = true, err
		}
	}
	status := statusOK
	if r.canceled {
		status = statusCanceled
	}
	step(r.k, r.w.SendReady(s))
	r.send(readyFrame(status, s, r.logical))
}

// loop runs until every slot has stopped and no RESULT is outstanding.
func (r *remoteLoop[T, U]) loop() {
	var b backoff
	ready := func() bool { return len(r.results) > 0 }
	for !r.w.Stopped() || r.held > 0 {
		r.c.pan.check(r.k)
		progressed := false
		for len(r.results) > 0 {
			r.finish(<-r.results)
			progressed = true
		}
		if r.pollRoot() {
			progressed = true
		}
		if progressed {
			b.reset()
			continue
		}
		b.wait(r.c.spare, ready, r.c.pan.wake)
	}
}

// finish sends a slot's RESULT, records its error, and sends its READY.
func (r *remoteLoop[T, U]) finish(res slotResult) {
	r.send(res.frame) // a blocking send: the frame's memory is free when it returns
	select {
	case r.free <- res.frame:
	default:
	}
	step(r.k, r.w.SendResult(res.slot))
	r.held--
	if f := res.fault; f != nil {
		r.c.rep.add(f.key, f.class, f.kind, f.msg, f.err)
	}
	r.sendReady(res.slot)
}

// pollRoot services at most one message from the root: a TASK for a slot
// (handed to it, or run here in inline mode) or a STOP.
func (r *remoteLoop[T, U]) pollRoot() bool {
	ok, _, err := r.k.iprobe(tagPmap)
	if err != nil {
		r.k.abortTransport(err)
	}
	if !ok {
		return false
	}
	h, payload, _, err := r.k.recvFrame(r.c.root, tagPmap)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			r.k.abortProtocol(fmt.Sprintf("malformed reply to READY from the root: %v", err))
		}
		r.k.abortTransport(err)
	}
	s := int(h.Slot)
	if s >= r.logical {
		r.k.abortProtocol(fmt.Sprintf("%v for slot %d of %d", h.Kind, s, r.logical))
	}
	switch h.Kind {
	case wire.KindStop:
		step(r.k, r.w.OnStop(s))
		n, err := parseStop(payload)
		if err != nil {
			r.k.abortProtocol(fmt.Sprintf("STOP: %v", err))
		}
		r.stopN = n
		if r.w.Stopped() {
			r.closeJobs()
		}
	case wire.KindTask:
		if h.BatchID > math.MaxInt64 {
			r.k.abortProtocol(fmt.Sprintf("TASK batch id %d", h.BatchID))
		}
		id := int64(h.BatchID)
		step(r.k, r.w.OnTask(s, id))
		r.held++
		debugPrefetched(r.held - r.slots)
		j := remoteJob{slot: s, h: h, id: id, payload: payload}
		if !r.c.inline {
			r.jobs <- j // never blocks: at most logical jobs are held
			return true
		}
		res, ok := r.runTask(0, j, r.scratch)
		if !ok {
			r.c.pan.check(r.k)
		}
		r.scratch = res.frame
		r.finish(res)
	default:
		r.k.abortProtocol(fmt.Sprintf("%v in reply to READY", h.Kind))
	}
	return true
}

// step aborts on a worker-machine protocol error (an internal failure).
func step(k *collective, err error) {
	if err != nil {
		k.abortProtocol(err.Error())
	}
}

// runTask decodes and runs one TASK on slot s (which its callbacks see) and
// returns its RESULT frame, addressed to the TASK's logical slot and
// built in scratch's memory when it is large enough. The items are decoded
// from the job's payload, which it owns: bulk items alias it. Errors
// (decode, callback, encode) become a failed RESULT carrying the fault, so
// the root stops assigning. ok is false when a callback panicked.
func (r *remoteLoop[T, U]) runTask(s int, j remoteJob, scratch []byte) (res slotResult, ok bool) {
	// User code runs here besides the callbacks (custom msgpack encoders and
	// decoders of T and U): a panic or Goexit in it is recorded like a
	// callback's, and the coordinator aborts the job with ExitPanic.
	normal := false
	defer func() {
		if !normal {
			r.c.pan.record(capturePanic(recover()))
			ok = false
		}
	}()
	res, ok = r.evalTask(s, j, scratch)
	normal = true
	return res, ok
}

func (r *remoteLoop[T, U]) evalTask(s int, j remoteJob, scratch []byte) (res slotResult, ok bool) {
	k, id, batch := r.k, j.id, r.c.batch
	res.slot = j.slot
	wireFault := func(indices []int64, taskKey int64, what string, err error) (slotResult, bool) {
		msg := fmt.Sprintf("rank %d: %s of batch %d: %v", k.rank, what, id, err)
		res.fault = &rankFault{key: taskKey, class: sched.ClassWire, kind: KindWire, msg: msg, err: err}
		res.frame = withSlot(faultFrame(id, statusWire, indices, resultFault{Index: taskKey, Message: errmsg.Bound(msg)}), j.slot)
		return res, true
	}
	indices, rest, err := splitIndices(j.h, j.payload)
	if err != nil || len(indices) == 0 {
		if err == nil {
			err = &wire.Error{Kind: wire.ErrCount, Detail: "TASK without items"}
		}
		// The batch's first index follows from its id: batches are
		// consecutive runs of the fixed batch size.
		key := id
		if id <= math.MaxInt64/int64(batch) {
			key = id * int64(batch)
		}
		return wireFault(nil, key, "decoding the TASK", err)
	}
	items, err := wire.DecodeItemsOwned[T](rest, len(indices))
	if err != nil {
		return wireFault(indices, indices[0], "decoding the items", err)
	}
	out := make([]U, len(items))
	o, fine := evalBatch(r.c.f, s, items, out, r.c.stopOnError, r.c.pan)
	if !fine {
		return res, false
	}
	if o.errIdx >= 0 {
		i := indices[o.errIdx]
		msg := errmsg.Bound(o.err.Error())
		res.fault = &rankFault{key: i, class: sched.ClassUser, kind: KindUser, msg: msg, err: o.err}
		res.frame = withSlot(faultFrame(id, statusUser, indices, resultFault{Index: i, Message: msg}), j.slot)
		return res, true
	}
	buf, err := resultFrame(scratch, id, indices, out)
	if err != nil {
		return wireFault(indices, indices[0], "encoding the results", err)
	}
	res.frame = withSlot(buf, j.slot)
	return res, true
}
