package hataori

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/sched"
)

// remoteLoop is a non-root rank's side of one call. Towards the root the
// rank has logical slots: one per slot of its executor, plus one, the
// prefetch slot, with bounded prefetch or automatic batch sizes (whose
// READY the root may hold until its measurements call for prefetch: see
// rootLoop.holdReady). Each logical slot sends READY, gets a TASK (whose
// RESULT it sends) or STOP (the first READY, slot 0's, stands for one of
// every logical slot); once every logical slot has stopped and every
// RESULT is sent, the rank sends its one DRAIN. TASKs go into one queue
// that the executor's slots take from, so with prefetch a slot that
// finishes a batch starts the prefetched one without a round trip; at most
// one batch waits beyond the running ones (the protocol bounds the batches
// a rank holds to its logical slots). The coordinator (the calling
// goroutine) makes every MPI call; a slot decodes its TASK, runs the
// callbacks and encodes its RESULT on its own goroutine, so the
// coordinator stays free to answer.
type remoteLoop[T, U any] struct {
	c          *call[T, U]
	k          *coll.Coll
	w          *sched.Remote
	execSlots  int            // the executor's slots
	logical    int            // slots towards the root: execSlots, plus the prefetch slot
	jobs       chan remoteJob // capacity logical; closed once every logical slot stopped
	closed     bool
	results    chan slotResult // capacity logical: a finished slot never waits
	free       chan []byte     // RESULT frames already sent, for reuse
	held       int             // TASKs received whose RESULT is not yet sent
	kicks      bool            // hand-offs through resultKick and taskKick (no forced prefetch)
	resultKick coll.Kick       // signalled by a slot that queued a RESULT
	taskKick   coll.Kick       // signalled by the coordinator that queued a TASK (or closed the queue)

	stopN         int64 // the input length, from the first STOP
	ctxEnded      bool  // this rank's ctx ended (reported at the end)
	cancelErr     error
	cancelSent    bool         // CANCEL sent to the root (this rank's ctx ended)
	firstCanceled *remoteFault // FailFast: the first item that failed with the call's cancellation
	scratch       []byte       // the last RESULT's memory (inline mode)
	inBatch       bool         // inline mode: the coordinator is running a batch
	queued        []remoteJob  // inline with a prefetch slot: TASKs read while a batch ran, to run next
	meters        []slotMeter
	sending       coll.Outbox  // RESULTs and READYs whose nonblocking send has not completed
	placer        remotePlacer // writes bulk results into the root's grants (pmap_place.go)
	bell          *coll.Bell   // the root's bell, rung after every frame to the root (pmap_bell.go; nil: none)
}

// remoteJob is one TASK for a logical slot; payload is owned by the job.
type remoteJob struct {
	slot    int // the logical slot it answers
	h       wire.Header
	id      int64
	payload []byte
	at      time.Time // when the coordinator queued it (zero inline)
}

// slotResult is a slot's RESULT frame, with the errors it reports (if any)
// for the coordinator to record.
type slotResult struct {
	slot         int
	frame        []byte
	bodies       [][]byte // a segmented RESULT's segments (results' own memory), sent after frame
	faults       []remoteFault
	start, count int // the batch's first index and items (count 0: its indices did not parse)
}

// remoteFault is a fault a remote rank's slot hands to its coordinator with
// a RESULT, to record in the rank's report once the RESULT is sent (and,
// under CollectAll, in the list of failed items): one item's, or the whole
// frame's (index -1).
type remoteFault struct {
	index      int   // the failed item, -1 for a fault of the whole frame
	taskKey    int64 // a frame fault's key: its batch's first index
	kind       ErrorKind
	msg        string
	err        error
	canceled   bool // the item failed with the call's own cancellation
	collateral bool // CollectAll: failed with another item of its frame
}

// runRemote runs a non-root rank's side of a call.
func runRemote[T, U any](c *call[T, U], slots int, start func(serve func(int))) {
	logical := slots
	if (c.prefetch || c.batch == 0) && (!c.inline || c.inlineQueue) {
		logical++ // the prefetch slot
	}
	r := &remoteLoop[T, U]{
		c: c, k: c.k, w: sched.NewRemote(c.k.Rank, logical), execSlots: slots, logical: logical,
		jobs: make(chan remoteJob, logical), results: make(chan slotResult, logical),
		free: make(chan []byte, logical), meters: make([]slotMeter, slots),
	}
	// With forced prefetch the slot that finishes finds its next TASK
	// queued and the coordinator has a READY outstanding most of the time:
	// the kicks gained nothing measurable there, so such calls keep the
	// plain waits. The prefetch slot of automatic sizes keeps them: the
	// root holds its READY until prefetch pays (then the TASK waits in
	// MPI until a slot finishes and wakes the coordinator, which still
	// saves the round trip).
	r.kicks = !(c.prefetch && !c.inline)
	defer r.closeJobs()
	if c.inline {
		start(nil)
	} else {
		start(r.serve)
	}
	r.sendFirstReady()
	r.loop()
	r.awaitSends()
	step(r.k, r.w.SendDrain())
	r.send(drainFrame(drainStats(time.Since(c.t0), r.meters)))
	c.cost = remoteCost(r.meters)
	if r.ctxEnded {
		c.rep.addCall(r.stopN, sched.ClassDrain, KindCanceled, fmt.Sprintf("rank %d: context done: %v", r.k.Rank, r.cancelErr), r.cancelErr)
	}
	if f := r.firstCanceled; f != nil {
		c.rep.addCall(canceledKey(int(r.stopN)), sched.ClassDrain, KindCanceled, f.msg, f.err)
	}
}

// closeJobs closes the job queue once, so that every slot's loop returns
// (after the last STOP, or however the coordinator leaves).
func (r *remoteLoop[T, U]) closeJobs() {
	if !r.closed {
		r.closed = true
		close(r.jobs)
		r.taskKick.Signal()
	}
}

// serve is the loop of slot s, on that slot's goroutine: it takes the next
// TASK of any logical slot and runs it.
func (r *remoteLoop[T, U]) serve(s int) {
	for {
		j, ok := r.nextJob()
		if !ok {
			return
		}
		var scratch []byte
		select {
		case scratch = <-r.free:
		default:
		}
		res, ok := r.runTask(s, j, scratch)
		if !ok {
			r.resultKick.Signal() // a callback panicked: the coordinator aborts the job
			return
		}
		r.results <- res
		r.resultKick.Signal()
	}
}

// nextJob waits for the next TASK of any logical slot (false once the
// queue is closed). Without forced prefetch it waits on taskKick rather
// than in a channel receive, so that the coordinator's hand-off wakes this
// thread directly (see docs/ARCHITECTURE.md, "Waiting on a shared core").
func (r *remoteLoop[T, U]) nextJob() (remoteJob, bool) {
	if !r.kicks {
		j, ok := <-r.jobs
		return j, ok
	}
	var rs coll.Resched
	wait := slotIdleWait()
	for {
		seen := r.taskKick.Seq()
		select {
		case j, ok := <-r.jobs:
			return j, ok
		default:
		}
		debugKickWait()
		r.taskKick.Wait(seen, wait)
		rs.Check()
	}
}

func (r *remoteLoop[T, U]) send(buf []byte) {
	if err := r.k.SendFrame(r.c.root, tagPmap, buf); err != nil {
		r.k.AbortTransport(err)
	}
	r.ring()
}

// ring rings the root's bell, if this rank opened it, after a frame to
// the root has started.
func (r *remoteLoop[T, U]) ring() {
	if r.bell != nil {
		debugBellRing()
		r.bell.Ring()
	}
}

// sendFirstReady sends the rank's first READY, slot 0's, which announces
// its logical slots and stands for a READY of each of them: at the start
// every slot is free, and the root deals each one a batch before it serves
// any other message (see rootLoop.firstDeal), so the first batches reach
// every logical slot of every rank however late this rank's coordinator
// runs. One message instead of one per logical slot.
func (r *remoteLoop[T, U]) sendFirstReady() {
	for s := 1; s < r.logical; s++ {
		step(r.k, r.w.SendReady(s))
	}
	var flags uint8
	if r.logical > r.execSlots {
		flags = readyPrefetchSlot
	}
	r.sendReadyFlags(0, flags)
}

// sendReady sends slot s's READY (marked canceled once ctx has ended).
func (r *remoteLoop[T, U]) sendReady(s int) { r.sendReadyFlags(s, 0) }

// sendReadyFlags sends slot s's READY with flags in its status.
func (r *remoteLoop[T, U]) sendReadyFlags(s int, flags uint8) {
	if !r.ctxEnded && r.c.ctx.Err() != nil {
		r.ctxEnded, r.cancelErr = true, ctxError(r.c.ctx)
	}
	status := statusOK
	if r.ctxEnded {
		status = statusCanceled
	}
	if r.bell != nil {
		flags |= readyBell
	}
	step(r.k, r.w.SendReady(s))
	// Without waiting, as a RESULT: a blocking send would spin on this
	// rank's core until the root's coordinator, asleep until its next
	// RESULT is due, takes the message. MPI keeps the order of one
	// sender's messages.
	snd, err := r.k.StartFrame(r.c.root, tagPmap, readyFrame(status|flags, s, r.logical))
	if err != nil {
		r.k.AbortTransport(err)
	}
	r.sending.Add(snd, nil, nil, nil)
	r.ring() // the RESULT before it too
}

// loop runs until every slot has stopped and no RESULT is outstanding.
func (r *remoteLoop[T, U]) loop() {
	b := coll.Backoff{Max: loopBackoffMax()}
	busy := loopBusyWait()
	ready := func() bool { return len(r.results) > 0 }
	ctxDone := r.c.ctx.Done()
	for !r.w.Stopped() || r.held > 0 {
		seen := r.resultKick.Seq()
		b.Resched.Check()
		r.c.pan.check(r.k)
		progressed := false
		if !r.cancelSent {
			select {
			case <-ctxDone:
				// Tell the root now rather than with the next READY, which
				// may be a long batch away.
				r.cancelSent = true
				if !r.ctxEnded {
					r.ctxEnded, r.cancelErr = true, ctxError(r.c.ctx)
				}
				r.send(cancelFrame(haltAll))
				progressed = true
			default:
			}
		}
		for len(r.results) > 0 {
			r.finish(<-r.results)
			progressed = true
		}
		if r.reapSends() {
			progressed = true
		}
		if r.pollRoot() {
			progressed = true
		}
		if progressed {
			b.Reset()
			continue
		}
		// Spinning is free while no slot of this rank holds a batch.
		switch {
		case !r.kicks:
			b.Wait(r.held == 0, ready, r.c.pan.wake)
		case r.held >= r.execSlots && r.sending.Len() == 0:
			// Every executor slot holds a batch: only a CANCEL, a
			// prefetched TASK or the prefetch slot's STOP can arrive,
			// none of them urgent while every slot computes, so wait
			// for a slot to finish (or busy). A RESULT still on its
			// way needs this rank's MPI progress: the back-off below
			// keeps testing it.
			debugKickWait()
			r.resultKick.Wait(seen, busy)
		default:
			b.WaitKick(r.held == 0, ready, r.c.pan.wake, &r.resultKick, seen)
		}
	}
}

// finish starts sending a slot's RESULT, records its error, and sends its
// READY. The RESULT goes out without waiting for the root to receive it
// (reapSends returns its memory once it has): the root may at the same
// moment be sending this rank a TASK, and two blocking sends of frames
// above the MPI's eager limit would each wait for the other's receive. MPI
// keeps the order of one sender's messages, so the READY still follows the
// RESULT.
func (r *remoteLoop[T, U]) finish(res slotResult) {
	snd, err := r.k.StartFrame(r.c.root, tagPmap, res.frame)
	if err != nil {
		r.k.AbortTransport(err)
	}
	var bodies []coll.Sending
	for _, b := range res.bodies {
		bs, err := r.k.StartBody(r.c.root, tagPmap+1, b)
		if err != nil {
			r.k.AbortTransport(err)
		}
		bodies = append(bodies, bs)
	}
	// The frame goes back for reuse once every send completed; the
	// bodies (the results' own memory) are only referenced until then.
	r.sending.Add(snd, res.frame, bodies, res.bodies)
	debugResultSent()
	step(r.k, r.w.SendResult(res.slot))
	r.held--
	for _, f := range res.faults {
		r.record(f)
	}
	r.sendReady(res.slot)
}

// reapSends completes the RESULT sends that MPI has finished, returning
// their frames for reuse, and reports whether any did.
func (r *remoteLoop[T, U]) reapSends() bool {
	reaped, err := r.sending.Reap(r.reuseFrame)
	if err != nil {
		r.k.AbortTransport(err)
	}
	return reaped
}

// awaitSends waits until every RESULT send has completed (the root is
// receiving: it waits for this rank's DRAIN), so that no frame outlives
// the call.
func (r *remoteLoop[T, U]) awaitSends() {
	if err := r.sending.Await(r.reuseFrame); err != nil {
		r.k.AbortTransport(err)
	}
}

// reuseFrame takes back the memory of a RESULT whose sends completed: the
// inline slot's scratch, or the slots' free list (nil: a READY's, none).
func (r *remoteLoop[T, U]) reuseFrame(frame []byte) {
	switch {
	case frame == nil:
	case r.c.inline && r.scratch == nil:
		r.scratch = frame
	default:
		select {
		case r.free <- frame:
		default:
		}
	}
}

// record reports one fault of a RESULT just sent.
func (r *remoteLoop[T, U]) record(f remoteFault) {
	rep := r.c.rep
	switch {
	case f.index < 0:
		rep.addCall(f.taskKey, sched.ClassWire, f.kind, f.msg, f.err)
		return
	case f.canceled && !r.c.collect:
		if r.firstCanceled == nil {
			r.firstCanceled = &f // reported with the input length, known at the end
		}
		return
	case !f.canceled && !f.collateral:
		class := sched.ClassUser
		if f.kind == KindWire {
			class = sched.ClassWire
		}
		rep.addItem(f.index, class, f.kind, f.msg, f.err)
	}
	if r.c.collect {
		rep.note(ItemFailure{Index: f.index, Kind: f.kind, Rank: r.k.Rank, Message: f.msg, err: f.err})
	}
}

// pollRoot services at most one message from the root: a TASK for a slot
// (handed to it, or run here in inline mode) or a STOP.
func (r *remoteLoop[T, U]) pollRoot() bool {
	ok, _, err := r.k.Iprobe(tagPmap)
	if err != nil {
		r.k.AbortTransport(err)
	}
	if !ok {
		return false
	}
	h, payload, _, err := r.k.RecvFrame(r.c.root, tagPmap)
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			r.k.AbortProtocol(fmt.Sprintf("malformed reply to READY from the root: %v", err))
		}
		r.k.AbortTransport(err)
	}
	s := int(h.Slot)
	if s >= r.logical {
		r.k.AbortProtocol(fmt.Sprintf("%v for slot %d of %d", h.Kind, s, r.logical))
	}
	if r.inBatch && h.Kind != wire.KindCancel && r.logical == r.execSlots {
		// Only the prefetch slot's TASK or STOP can come while the one
		// executor slot's batch runs inline.
		r.k.AbortProtocol(fmt.Sprintf("%v for slot %d while its batch runs", h.Kind, s))
	}
	switch h.Kind {
	case wire.KindCancel:
		low, err := parseCancel(payload)
		if err != nil {
			r.k.AbortProtocol(fmt.Sprintf("CANCEL from the root: %v", err))
		}
		tracef("recv-cancel low=%d", low)
		// The index first: a batch released by the cancellation
		// already reads it.
		r.c.low.lower(low)
		r.c.cancel(ErrStopped)
	case wire.KindStop:
		step(r.k, r.w.OnStop(s))
		n, err := parseStop(payload)
		if err != nil {
			r.k.AbortProtocol(fmt.Sprintf("STOP: %v", err))
		}
		r.stopN = n
		if r.w.Stopped() {
			r.closeJobs()
		}
	case wire.KindTask:
		if h.BatchID > math.MaxInt64 {
			r.k.AbortProtocol(fmt.Sprintf("TASK batch id %d", h.BatchID))
		}
		id := int64(h.BatchID)
		if h.Status&taskBell != 0 {
			ref, rest, err := splitBell(payload)
			if err != nil {
				r.k.AbortProtocol(fmt.Sprintf("malformed TASK from the root: %v", err))
			}
			h.Status &^= taskBell
			payload = rest
			if r.bell == nil {
				r.bell = openBell(ref)
			}
		}
		step(r.k, r.w.OnTask(s, id))
		r.held++
		debugPrefetched(r.held - r.execSlots)
		j := remoteJob{slot: s, h: h, id: id, payload: payload}
		if !r.c.inline {
			j.at = time.Now()
			r.jobs <- j // never blocks: at most logical jobs are held
			r.taskKick.SignalOne()
			return true
		}
		if r.inBatch {
			// The prefetch slot's TASK, read between the items of the
			// running batch: it runs once that batch is done.
			j.at = time.Now()
			r.queued = append(r.queued, j)
			return true
		}
		r.runInline(j)
		for len(r.queued) > 0 {
			q := r.queued[0]
			r.queued = r.queued[1:]
			r.runInline(q)
		}
	default:
		r.k.AbortProtocol(fmt.Sprintf("%v in reply to READY", h.Kind))
	}
	return true
}

// runInline runs TASK j on the coordinator (inline mode) and starts
// sending its RESULT.
func (r *remoteLoop[T, U]) runInline(j remoteJob) {
	r.inBatch = true
	res, ok := r.runTask(0, j, r.scratch)
	r.inBatch = false
	if !ok {
		r.c.pan.check(r.k)
	}
	r.scratch = nil // MPI's until its send completes (reapSends)
	r.finish(res)
}

// step aborts on a worker-machine protocol error (an internal failure).
func step(k *coll.Coll, err error) {
	if err != nil {
		k.AbortProtocol(err.Error())
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
	t0 := time.Now()
	res, ok = r.evalTask(s, j, scratch)
	if ok {
		t1 := time.Now()
		var queued time.Duration
		if !j.at.IsZero() {
			queued = t0.Sub(j.at)
		}
		putTiming(res.frame, t1.Sub(t0), queued)
		if res.count > 0 {
			r.meter(s, j, res.start, res.count, t0, t1)
		}
	}
	normal = true
	return res, ok
}

// evalTask runs one TASK in three steps: decode the indices and items,
// run the callbacks, encode the RESULT. Any failure on the way becomes a
// failed RESULT (see fault). ok is false when a callback panicked. The
// caller (runTask) times it: the RESULT's trailer and the slot's meters.
func (r *remoteLoop[T, U]) evalTask(s int, j remoteJob, scratch []byte) (res slotResult, ok bool) {
	res.slot = j.slot
	payload := j.payload
	var grants grantTail
	if j.h.Status&taskGrants != 0 {
		var err error
		if grants, payload, err = splitGrants(payload); err != nil {
			return r.frameFault(res, j, nil, r.firstKey(j), "decoding the TASK", err)
		}
	}
	indices, rest, err := splitIndices(j.h, payload)
	if err != nil || len(indices) == 0 {
		if err == nil {
			err = &wire.Error{Kind: wire.ErrCount, Detail: "TASK without items"}
		}
		return r.frameFault(res, j, nil, r.firstKey(j), "decoding the TASK", err)
	}
	res.start, res.count = int(indices[0]), len(indices)
	items, err := wire.DecodeItemsOwned[T](rest, len(indices))
	if err != nil {
		return r.decodeFault(res, j, indices, err, scratch)
	}
	out := make([]U, len(items))
	// A TASK's indices are its batch's range (taskFrame), so item p is
	// index indices[0]+p.
	rule := r.c.stopRule()
	if r.c.inline {
		rule.look = r.betweenItems()
	}
	o, fine := evalBatch(r.c.cctx, r.c.f, s, indices[0], items, out, rule, r.c.pan)
	if !fine {
		return res, false
	}
	if r.c.collect {
		return r.encodeAll(res, j, indices, o, out, scratch)
	}
	return r.encodeFirst(res, j, indices, o, out, scratch, grants)
}

// betweenItems is what a batch that the coordinator runs itself (inline)
// does before each item (stopRule.look): once loopBusyWait has passed
// since it last did, it reads a frame from the root, so that a CANCEL
// (another rank's failing item under FailFast) stops the batch before its
// next item, as a helper's batch stops once the coordinator beside it has
// read the CANCEL, within the same bound (1 ms; 4 ms on a node with more
// ranks than CPUs, where Open MPI gives up the core in a progress call
// that finds nothing, so each look costs the computing thread its core).
// Besides a CANCEL only the prefetch slot's TASK (queued to run next) or
// STOP can come then: the executor's one slot holds this batch, and the
// root sends a TASK or STOP only in reply to a READY.
func (r *remoteLoop[T, U]) betweenItems() func() {
	last, every := time.Now(), loopBusyWait()
	return func() {
		if now := time.Now(); now.Sub(last) >= every {
			last = now
			r.pollRoot()
		}
	}
}

// firstKey is the error key of TASK j whose indices cannot be read: its
// batch's first index. With a fixed batch size B it follows from the id
// (id·B; id itself when the product would overflow); automatic sizes
// have no such rule, so it is the first raw index the TASK carries
// (taskFrame writes the batch's Start there), or, when the payload does
// not hold one, the id (never above the batch's first index: every batch
// has an item).
func (r *remoteLoop[T, U]) firstKey(j remoteJob) int64 {
	id := j.id
	if batch := int64(r.c.batch); batch > 0 {
		if id <= math.MaxInt64/batch {
			return id * batch
		}
		return id
	}
	if len(j.payload) >= indexBytes {
		if v := binary.LittleEndian.Uint64(j.payload); v <= math.MaxInt64 {
			return int64(v)
		}
	}
	return id
}

// meter adds a finished TASK of slot s, count items from start, run from
// t0 to t1, to the slot's meters (only slot s writes them). The size
// histogram allocates only for a size the slot has not run before.
func (r *remoteLoop[T, U]) meter(s int, j remoteJob, start, count int, t0, t1 time.Time) {
	m := &r.meters[s]
	m.items += int64(count)
	m.batches++
	m.sizes.Add(count)
	m.busy += t1.Sub(t0)
	if j.h.Status&taskSpans != 0 {
		m.spans = append(m.spans, BatchSpan{Rank: r.k.Rank, Slot: s, Batch: j.id, Start: start, Count: count,
			Begin: t0.Sub(r.c.t0), End: t1.Sub(r.c.t0)})
	}
}

// fault makes res the failed RESULT of TASK j (echoing indices) with the
// one fault f, sent with the given status; key is the fault's index on the
// wire (the failed item, or the batch's key for a fault of the whole
// frame) and msg its message there. Under FailFast the rank's other
// running batches stop above key (call.failAt) unless f is a consequence
// of the stop (canceled). It cannot fail.
func (r *remoteLoop[T, U]) fault(res slotResult, j remoteJob, indices []int64, status uint8, key int64, f remoteFault, msg string) (slotResult, bool) {
	if !f.canceled {
		r.c.failAt(key)
	}
	res.faults = []remoteFault{f}
	res.frame = withSlot(faultFrame(j.id, status, indices, wireFault{Index: key, Kind: uint8(f.kind), Message: msg}), j.slot)
	return res, true
}

// frameFault fails the whole frame of TASK j with a wire error err met
// while doing what; key is the batch's first index.
func (r *remoteLoop[T, U]) frameFault(res slotResult, j remoteJob, indices []int64, key int64, what string, err error) (slotResult, bool) {
	msg := fmt.Sprintf("rank %d: %s of batch %d: %v", r.k.Rank, what, j.id, err)
	return r.fault(res, j, indices, statusWire, key, remoteFault{index: -1, taskKey: key, kind: KindWire, msg: msg, err: err}, errmsg.Bound(msg))
}

// wireItemFault fails item indices[pos] of TASK j with a wire error err met
// while doing what (to it).
func (r *remoteLoop[T, U]) wireItemFault(res slotResult, j remoteJob, indices []int64, pos int, what string, err error) (slotResult, bool) {
	msg := errmsg.Bound(fmt.Sprintf("rank %d: %s %d (batch %d): %v", r.k.Rank, what, indices[pos], j.id, err))
	return r.fault(res, j, indices, statusWire, indices[pos], remoteFault{index: int(indices[pos]), kind: KindWire, msg: msg, err: err}, msg)
}

// decodeFault fails TASK j whose items did not decode (err): the item
// that failed when the error names it (under CollectAll, with the others
// failing as collateral), the whole frame otherwise.
func (r *remoteLoop[T, U]) decodeFault(res slotResult, j remoteJob, indices []int64, err error, scratch []byte) (slotResult, bool) {
	pos, known := wire.ItemPosition(err)
	if !known {
		return r.frameFault(res, j, indices, indices[0], "decoding the items", err)
	}
	if !r.c.collect {
		return r.wireItemFault(res, j, indices, pos, "decoding item", err)
	}
	msg := errmsg.Bound(fmt.Sprintf("rank %d: decoding item %d (batch %d): %v", r.k.Rank, indices[pos], j.id, err))
	var faults []remoteFault
	for q, ix := range indices {
		f := remoteFault{index: int(ix), kind: KindWire, msg: msg, err: err}
		if q != pos {
			f.msg, f.err, f.collateral = fmt.Sprintf("rank %d: not run: item %d of the same batch failed to decode", r.k.Rank, indices[pos]), nil, true
		}
		faults = append(faults, f)
	}
	return r.partial(res, j, j.id, indices, faults, []U{}, scratch)
}

// userFault is the remoteFault of item index, which failed with f.
func userFault(rank int, index int64, f itemFault) remoteFault {
	rf := remoteFault{index: int(index), kind: KindUser, msg: errmsg.Bound(f.err.Error()), err: f.err}
	if f.canceled {
		rf.kind, rf.msg, rf.canceled = KindCanceled, canceledMessage(rank, int(index), f.err), true
	}
	return rf
}

// encodeFirst builds the RESULT of TASK j outside CollectAll: the first
// failed item's fault, or else the results out, whose bulk segments that
// fit the TASK's grants (if any) it writes into the root's memory
// (remotePlacer.place) instead of sending them.
func (r *remoteLoop[T, U]) encodeFirst(res slotResult, j remoteJob, indices []int64, o batchOutcome, out []U, scratch []byte, grants grantTail) (slotResult, bool) {
	if f := o.first(); f != nil {
		i := indices[f.pos]
		rf := userFault(r.k.Rank, i, *f)
		return r.fault(res, j, indices, statusUser, i, rf, rf.msg)
	}
	buf, bodies, err := resultFrame(scratch, j.id, indices, out)
	if err != nil {
		pos, known := wire.ItemPosition(err)
		if !known {
			return r.frameFault(res, j, indices, indices[0], "encoding the results", err)
		}
		return r.wireItemFault(res, j, indices, pos, "encoding the result of item", err)
	}
	res.frame, res.bodies = withSlot(buf, j.slot), bodies
	if grants.addrs != nil {
		res.bodies = r.placer.place(grants, res.frame, bodies)
	}
	return res, true
}

// encodeAll builds the RESULT of TASK j under CollectAll: every failed
// item travels in it, with the results of the others.
func (r *remoteLoop[T, U]) encodeAll(res slotResult, j remoteJob, indices []int64, o batchOutcome, out []U, scratch []byte) (slotResult, bool) {
	if len(o.faults) == 0 {
		return r.partial(res, j, j.id, indices, nil, out, scratch, indices...)
	}
	faults := make([]remoteFault, 0, len(o.faults))
	succ := make([]U, 0, len(out)-len(o.faults))
	var succIdx []int64
	q := 0
	for p := range out {
		if q < len(o.faults) && o.faults[q].pos == p {
			faults = append(faults, userFault(r.k.Rank, indices[p], o.faults[q]))
			q++
			continue
		}
		succ = append(succ, out[p])
		succIdx = append(succIdx, indices[p])
	}
	return r.partial(res, j, j.id, indices, faults, succ, scratch, succIdx...)
}

// partial builds the RESULT of a CollectAll batch with faults (failed items,
// in index order) and succ, the results of the other items (whose indices
// are succIdx). When the results cannot be encoded, each of them fails
// too (the one that failed with its error, the others naming it).
func (r *remoteLoop[T, U]) partial(res slotResult, j remoteJob, id int64, indices []int64, faults []remoteFault, succ []U, scratch []byte, succIdx ...int64) (slotResult, bool) {
	k := r.k
	build := func(faults []remoteFault, succ []U) ([]byte, [][]byte, error) {
		if len(faults) == 0 {
			return resultFrame(scratch, id, indices, succ)
		}
		wf := make([]wireFault, len(faults))
		for i, f := range faults {
			wf[i] = wireFault{Index: int64(f.index), Kind: uint8(f.kind), Message: f.msg}
		}
		return partialFrame(scratch, id, indices, wf, succ)
	}
	buf, bodies, err := build(faults, succ)
	if err != nil && len(succ) > 0 {
		// The results failed to encode: fail them all, in index order.
		pos, known := wire.ItemPosition(err)
		msg := errmsg.Bound(fmt.Sprintf("rank %d: encoding the results of batch %d: %v", k.Rank, id, err))
		if known {
			msg = errmsg.Bound(fmt.Sprintf("rank %d: encoding the result of item %d (batch %d): %v", k.Rank, succIdx[pos], id, err))
		}
		all := append([]remoteFault(nil), faults...)
		for q, ix := range succIdx {
			f := remoteFault{index: int(ix), kind: KindWire, msg: msg, err: err}
			if known && q != pos {
				f.msg, f.err, f.collateral = fmt.Sprintf("rank %d: result not sent: item %d of the same batch failed to encode", k.Rank, succIdx[pos]), nil, true
			} else if !known && q > 0 {
				f.collateral = true
			}
			all = append(all, f)
		}
		slices.SortFunc(all, func(a, b remoteFault) int { return cmp.Compare(a.index, b.index) })
		faults = all
		buf, bodies, err = build(faults, []U{})
	}
	if err != nil {
		res.faults = []remoteFault{{index: -1, taskKey: indices[0], kind: KindWire, msg: fmt.Sprintf("rank %d: encoding the RESULT of batch %d: %v", k.Rank, id, err), err: err}}
		res.frame = withSlot(faultFrame(id, statusWire, indices, wireFault{Index: indices[0], Kind: uint8(KindWire), Message: errmsg.Bound(res.faults[0].msg)}), j.slot)
		return res, true
	}
	res.faults = faults
	res.frame, res.bodies = withSlot(buf, j.slot), bodies
	return res, true
}
