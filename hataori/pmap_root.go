package hataori

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/sched"
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
	c      *call[T, U]
	k      *coll.Coll
	store  rootStore[T, U]    // the items and results: a slice (Pmap) or a stream's window
	stream *streamStore[T, U] // store, for a stream (nil: Pmap)
	n      int64              // the task key of call-level faults: the input length, or streamCallKey
	rep    *report
	pan    *firstPanic

	mu        sync.Mutex
	due       dueTracker // when each remote TASK left and when its RESULT is due (coordinator only)
	sch       *sched.Scheduler
	slots     int           // the root's own slots
	stopped   int           // root slots that got STOP
	loopEnded chan struct{} // closed once every rank has drained, or on a fatal failure
	closed    bool          // loopEnded is closed
	ctxEnded  bool          // this rank's ctx ended and was reported
	fatal     string        // an internal failure seen on a slot, for the coordinator to abort with
	inlineRun slotRun
	first     []slotRun      // each root slot's first batch, taken before the first deal (nil: none)
	waiting   []waitingReady // READYs that got Wait (a stream with no item yet; coordinator only)

	taskBuf   []byte      // memory for the next TASK (nil: allocate)
	taskSends coll.Outbox // TASKs on their way out (sendTask, reapTasks)
	taskFree  [][]byte    // memory of TASKs whose sends have completed
	taskFlags uint8       // what the other ranks measure (taskStats, taskSpans)
	place     *rootPlacer // grants for sender-side placement of bulk results (pmap_place.go)
	bells     rootBells   // the bell the other ranks of this host ring (pmap_bell.go; coordinator only)

	// Automatic prefetch (holdReady; coordinator only, holdable fixed).
	holdable     bool   // automatic sizes without Options.Prefetch: prefetch slots wait for the measurements
	prefetchSlot []bool // per rank: its last logical slot is its prefetch slot
	held         []int  // per rank: the status of its prefetch slot's held READY, -1: none
	nHeld        int    // READYs held

	// flags holds what the coordinator polls (failing, every round) and
	// the progress counters, on cache lines of their own.
	*rootFlags
	stopping bool  // the coordinator has cancelled (once)
	sentLow  int64 // the failing index the last CANCELs carried (stopIfFailing)
	// causeOnWay: under FailFast a remote batch stopped on a failure the
	// root has not heard of yet (a canceled fault, noteRemoteFault): that
	// rank's RESULT of the failing item follows and lowers the index, so
	// the stop is not call-level (stopIfFailing). Coordinator only.
	causeOnWay bool

	// Progress (OnProgress): the coordinator's last report.
	rounds       uint32 // coordinator rounds, to look at the clock every 16th
	lastFinished int64
	lastReport   time.Time

	// Statistics (Options.Stats).
	timing     bool        // measure the root's slots
	spans      bool        // record their spans (RecordSpans)
	meters     []slotMeter // one per root slot, written by that slot (end under mu)
	sent, recv []int64     // frame bytes to and from each rank (coordinator only)
	remote     []rankStats // each rank's DRAIN statistics (coordinator only)
	haveRemote []bool
}

// rootFlags is the state the root's slots write and its coordinator polls,
// allocated on its own and padded so that the coordinator's reads never
// share a cache line with the scheduler lock the slots take per batch.
type rootFlags struct {
	_ [64]byte
	// failing is set (under mu) once the scheduler has failed; the
	// coordinator then cancels the callbacks' context here and, with
	// CANCEL, on every rank that still runs a batch.
	failing atomic.Bool
	// exhausted is set (under mu, only when READYs may be held) once the
	// scheduler says every later READY gets STOP; the coordinator then
	// answers the READYs it holds.
	exhausted atomic.Bool
	_         [59]byte
	// finished and failed count the items finished and failed (under mu), for
	// OnProgress.
	finished, failed atomic.Int64
	// computing counts the root's slots inside a batch: with none, the
	// coordinator may spin while idle (no slot of its own computes).
	computing atomic.Int32
	_         [44]byte
}

// slotRun is what a root slot carries from one batch to the next.
type slotRun struct {
	have    bool
	b       sched.Batch
	o       batchOutcome
	t       sched.Timing // the batch's measurement (Compute)
	stopped bool         // the slot got STOP
}

// batchBytesLimit bounds the bytes of an automatic batch's TASK or
// RESULT (0: sched.MaxBatchBytes); a variable for the tests.
var batchBytesLimit int64

// runRoot runs the root's side of a call and returns the result table.
// slots[r] is rank r's slot count; with inline, the coordinator evaluates
// the root's only slot itself (MPI-only at MPI_THREAD_SINGLE).
func runRoot[T, U any](c *call[T, U], slots []int, pending []pendingReady, start func(serve func(int))) []U {
	k := c.k
	cfg := sched.Config{Items: len(c.items), BatchSize: c.batch, Root: k.Rank, Slots: slots, MaxBatchBytes: batchBytesLimit}
	if c.stream != nil {
		cfg.Open, cfg.Window = true, max(c.stream.window, c.batch) // a fixed batch must fit
	}
	sch, err := sched.New(cfg)
	if err != nil {
		start(nil)
		k.AbortProtocol(err.Error())
	}
	r := &rootLoop[T, U]{
		c: c, k: k, n: int64(len(c.items)), rep: c.rep, pan: c.pan,
		sch: sch, slots: slots[k.Rank], loopEnded: make(chan struct{}), rootFlags: new(rootFlags),
		timing: c.stats != nil, meters: make([]slotMeter, slots[k.Rank]),
		sent: make([]int64, k.Size), recv: make([]int64, k.Size),
		remote: make([]rankStats, k.Size), haveRemote: make([]bool, k.Size),
		due: newDueTracker(slots, k.Rank), holdable: c.batch == 0 && !c.prefetch,
		prefetchSlot: make([]bool, k.Size), held: make([]int, k.Size),
		bells: newRootBells(k.Size),
	}
	if r.bells.bell != nil {
		r.pan.bell.Store(r.bells.bell) // the root's slots' nudges ring it
	}
	for i := range r.held {
		r.held[i] = -1
	}
	var out []U
	var ss *streamStore[T, U]
	if c.stream == nil {
		out = make([]U, len(c.items))
		r.store = &sliceStore[T, U]{in: c.items, out: out}
	} else {
		r.n = streamCallKey
		ss = r.startStream(c.stream, cfg.Window)
		r.store = ss
	}
	r.place = newRootPlacer[U](k.Size, ss == nil || ss.pool == nil, c.inline)
	for _, p := range pending {
		r.prefetchSlot[p.rank] = p.prefetchSlot
	}
	if c.stats != nil {
		r.taskFlags |= taskStats
		if c.stats.RecordSpans {
			r.taskFlags |= taskSpans
			r.spans = true
		}
	}
	if !c.inline && c.stream == nil {
		// Each root slot takes its first batch before the first deal, as
		// every other rank's slots get theirs in it: so every slot of
		// every rank gets a batch of the first deal unless the input runs
		// out first, however late the root's slot goroutines run. (A
		// stream's items may not be read yet: its slots take theirs as
		// they come.)
		r.first = make([]slotRun, r.slots)
		for s := range r.first {
			r.next(s, &r.first[s])
		}
	}
	if c.inline {
		if r.timing {
			r.meters[0].begin = time.Since(c.t0)
		}
		start(nil)
	} else {
		start(r.serve)
	}
	if c.alone {
		// The short path: the whole input costs less than a hand-off to
		// another rank, so the root runs it, and no other rank takes part
		// until the convergence.
		for r.runInline() {
		}
		r.pan.check(r.k) // a callback panicked: abort the job
		r.settleAlone()
	} else {
		r.firstDeal(slots, pending)
	}
	r.loop(c.inline)
	if ss != nil {
		r.endStream(ss)
	}
	r.progress(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fatal != "" {
		k.AbortProtocol(r.fatal)
	}
	if err := sch.Check(); err != nil {
		k.AbortProtocol(err.Error())
	}
	st := sch.Stats()
	c.schedStats = &st
	c.cost = rootCost(&st, k.Rank)
	if !sch.Failed() && sch.Completed() != sch.Items() {
		k.AbortProtocol(fmt.Sprintf("finished with %d of %d items", sch.Completed(), sch.Items()))
	}
	if c.collect && sch.Failed() {
		r.collectMissing()
	}
	if c.stats != nil {
		for i := range r.meters {
			r.meters[i].busy = r.meters[i].end - r.meters[i].begin
		}
		cs := buildStats(k.Rank, time.Since(c.t0), r.meters, st, r.remote, r.haveRemote, r.sent, r.recv, c.stats.RecordSpans)
		c.callStats = &cs
	}
	return out
}

// firstDeal answers the other ranks' first READYs, each of which stands for
// a READY of every logical slot of its rank (remoteLoop.sendFirstReady),
// before the coordinator serves any other message: slot by slot across the
// ranks (every rank's slot 0 in rank order, then every rank's slot 1, …),
// so that the first batches spread over the ranks and, between ranks with
// as many slots, every executor slot is dealt before any prefetch slot (a
// rank's last). So every logical slot of every rank gets a batch of the
// first deal unless the input runs out first (the root's own slots took
// theirs just before, in runRoot), whatever the order and timing in which the ranks'
// coordinators run: a rank whose coordinator is descheduled right after
// its first READY still gets its share, where separate READYs per slot
// could arrive after faster ranks had taken the whole input. Cost: one
// send per logical slot (TASK or STOP), as before.
func (r *rootLoop[T, U]) firstDeal(slots []int, pending []pendingReady) {
	for _, ps := range dealOrder(slots, pending) {
		r.onReady(ps.rank, ps.slot, ps.status)
	}
}

// settleAlone ends, in the scheduler only, the part of every other rank
// in a call that the root ran alone (call.alone): each rank's one slot
// gets STOP for an implicit READY and the rank drains. No frame was or
// will be exchanged with them; the input is exhausted (or the call
// failed), so the scheduler can only stop them.
func (r *rootLoop[T, U]) settleAlone() {
	for rank := range r.k.Size {
		if rank == r.k.Rank {
			continue
		}
		r.locked(func() error {
			d, _, err := r.sch.OnReady(rank, 0)
			if err == nil && d != sched.Stop {
				err = fmt.Errorf("a call the root ran alone dealt rank %d a %v", rank, d)
			}
			if err != nil {
				return err
			}
			return r.sch.OnDrain(rank)
		})
	}
}

// dealt is one (rank, slot) of the first deal, with the status of its
// rank's first READY.
type dealt struct {
	rank, slot int
	status     uint8
}

// dealOrder is the order in which firstDeal answers the implicit READYs of
// pending (one per logical slot, slots[rank] of them): slot-major, ranks in
// the order of pending.
func dealOrder(slots []int, pending []pendingReady) []dealt {
	var out []dealt
	for s := 0; ; s++ {
		more := false
		for _, p := range pending {
			if s < slots[p.rank] {
				out = append(out, dealt{p.rank, s, p.status})
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// collectMissing records, for a CollectAll call that stopped early, the
// ranges of items that ended without a result and are not in the list of
// failed items (under mu).
func (r *rootLoop[T, U]) collectMissing() {
	listed := make(map[int]bool, len(r.rep.list))
	for _, f := range r.rep.list {
		listed[f.Index] = true
	}
	r.rep.missing = append(r.rep.missing, r.store.missing(r.sch, listed)...)
}

// note lists a failed item (CollectAll), under mu.
func (r *rootLoop[T, U]) note(f ItemFailure) {
	r.rep.note(f)
	r.store.failedItem(f.Index)
}

// noteFailed sets failing, and wakes the coordinator, the first time the
// scheduler is seen failed (under mu); where READYs may be held, it also
// sets exhausted the first time every later READY gets STOP.
func (r *rootLoop[T, U]) noteFailed() {
	if !r.failing.Load() && r.sch.Failed() {
		r.failing.Store(true)
		r.pan.nudge()
		if r.stream != nil {
			r.stream.kick()
		}
	}
	if r.holdable && !r.exhausted.Load() && r.sch.Exhausted() {
		r.exhausted.Store(true)
		r.pan.nudge()
	}
}

// setFatal records an internal failure seen off the coordinator (called
// under mu) and wakes the coordinator, which aborts the job.
func (r *rootLoop[T, U]) setFatal(err error) {
	if r.fatal == "" {
		r.fatal = err.Error()
	}
	r.pan.nudge()
	r.endLoop()
}

// checkDrained ends the loop once every rank has drained (under mu).
func (r *rootLoop[T, U]) checkDrained() {
	if r.sch.Done() {
		r.endLoop()
	}
}

func (r *rootLoop[T, U]) endLoop() {
	if !r.closed {
		r.closed = true
		close(r.loopEnded)
		r.pan.nudge() // a root slot may end the loop while the coordinator sleeps on the bell
	}
}

// loop is the coordinator: it services one Iprobe-detected message per
// round, checks the context, the slots' panics and failures, reports
// progress, and backs off when idle; it returns once every rank has
// drained. At world size one it just waits.
func (r *rootLoop[T, U]) loop(inline bool) {
	defer r.awaitTasks()
	base, busy := loopBackoffMax(), loopBusyWait()
	b := coll.Backoff{Max: base}
	backable := oversubscribedOnce() && r.othersPrefetch()
	ready := func() bool {
		select {
		case <-r.loopEnded:
			return true
		default:
			return false
		}
	}
	if r.bells.bell != nil {
		// The caller's context ending rings too: the bell's sleeps are long.
		defer context.AfterFunc(r.c.ctx, r.pan.nudge)()
	}
	var tick <-chan time.Time
	if r.c.onProgress != nil && r.k.Size == 1 && !inline {
		t := time.NewTicker(r.c.progressEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		seen := r.bells.seq() // before this round's polls: a ring after them ends the wait below
		b.Resched.Check()
		r.pan.check(r.k)
		r.checkContext()
		r.stopIfFailing()
		if r.nHeld > 0 && r.exhausted.Load() {
			r.releaseHeld()
		}
		if r.stream != nil {
			r.retryWaiting()
		}
		r.progress(false)
		select {
		case <-r.loopEnded:
			return
		default:
		}
		if r.k.Size == 1 && !inline {
			ctxDone := r.c.ctx.Done()
			if r.c.ctx.Err() != nil {
				ctxDone = nil // already reported by checkContext
			}
			select {
			case <-r.loopEnded:
			case <-r.pan.wake:
			case <-ctxDone:
			case <-tick:
			}
			continue
		}
		if r.taskSends.Len() > 0 {
			r.reapTasks()
		}
		progressed := r.pollRemote()
		if inline && !progressed && !r.inlineRun.stopped {
			// MPI-only at MPI_THREAD_SINGLE: the batch blocks this
			// goroutine, so first answer everything already waiting.
			for n := 0; n < 2*r.k.Size && r.pollRemote(); n++ {
			}
			r.runInline()
			progressed = true
		}
		if progressed {
			b.Reset()
			continue
		}
		if r.bells.all() && r.taskSends.Len() == 0 {
			// Every other rank rings the bell after each frame it
			// starts to the root, and the root's slots after each
			// nudge: sleep until one does (a TASK still on its way
			// out needs this rank's MPI progress: the polls below).
			debugBellWait()
			if r.computing.Load() > 0 {
				// No back-off: every timed wake-up would find nothing.
				b.Resched.Check()
				r.bells.bell.Wait(seen, busy)
				continue
			}
			b.Max = busy
			b.WaitKick(true, ready, r.pan.wake, r.bells.bell, seen)
			continue
		}
		if r.due.active() && r.computing.Load() > 0 && r.waitDue() {
			continue
		}
		computing := r.computing.Load() > 0
		b.Max = r.pollCap(base, backable && computing)
		b.Wait(!computing, ready, r.pan.wake)
	}
}

// pollCap is the longest idle sleep of the coordinator's next wait: base
// (the loop's BackoffMax), or coll.BackoffMaxBacked when backable (a node
// with more ranks than CPUs, every other rank has a prefetch slot, the
// root's own slots compute) and every logical slot of every other rank
// holds a batch (RemoteBusy). Then the next message is a RESULT and READY
// of a rank that still has a batch to run, or a CANCEL: none needs an
// answer within 200 µs, and every wake-up that finds nothing takes a
// context switch from a core a slot needs. Once a slot is idle (its READY
// in, or held: see holdReady) or stopped, the cap is base again.
// Coordinator only.
func (r *rootLoop[T, U]) pollCap(base time.Duration, backable bool) time.Duration {
	if !backable {
		return base
	}
	r.mu.Lock()
	busy := r.sch.RemoteBusy()
	r.mu.Unlock()
	if busy {
		return coll.BackoffMaxBacked
	}
	return base
}

// othersPrefetch reports whether every rank but this one announced a
// prefetch slot in its first READY (false at world size one).
func (r *rootLoop[T, U]) othersPrefetch() bool {
	if r.k.Size == 1 {
		return false
	}
	for rank, has := range r.prefetchSlot {
		if !has && rank != r.k.Rank {
			return false
		}
	}
	return true
}

// waitDue is the coordinator's idle wait while its slots compute and a
// remote RESULT is predicted (see dueTracker): it
// sleeps until dueEarly before the RESULT is due (at most dueMaxSleep), or
// returns at once, to poll again, from then until dueSpin after it. It
// reports false when no RESULT is predicted then; the caller backs off as
// usual.
func (r *rootLoop[T, U]) waitDue() bool {
	until, ok := r.due.next(int64(time.Since(r.c.t0)))
	switch {
	case !ok || until < -dueSpin:
		return false
	case until <= dueEarly:
		return true // due: poll again without sleeping
	}
	debugDueSleep()
	coll.ThreadSleep(min(until-dueEarly, dueMaxSleep))
	return true
}

// progress calls the OnProgress hook, on the coordinator, when
// ProgressEvery has passed since the last call and the count of finished
// items changed; final reports unconditionally (once, at the end of the
// call). It looks at the clock every 16th round (every round at world size
// one, whose coordinator only wakes for the ticker and the slots).
func (r *rootLoop[T, U]) progress(final bool) {
	if r.c.onProgress == nil {
		return
	}
	var now time.Time
	if !final {
		// Every 16th round at most, the clock; only once the interval
		// has passed, the counters the slots write.
		if r.rounds++; r.rounds&15 != 0 && r.k.Size > 1 {
			return
		}
		if now = time.Now(); now.Sub(r.lastReport) < r.c.progressEvery {
			return
		}
	} else {
		now = time.Now()
	}
	n := r.finished.Load()
	if !final && n == r.lastFinished {
		return
	}
	r.lastFinished, r.lastReport = n, now
	r.c.onProgress(Progress{Done: int(n), Failed: int(r.failed.Load()), Total: r.store.total(), Elapsed: now.Sub(r.c.t0)})
}

// stopIfFailing, once the scheduler has failed, cancels the callbacks'
// context and sends CANCEL, carrying the lowest failing index the root
// knows (c.low), to every other rank that has a slot the root has not yet
// sent STOP (only the coordinator sends, so no STOP can overtake the
// check: such a rank receives the CANCEL before its last STOP, hence
// before its DRAIN). A failure that lowered no index (an unkeyed
// call-level stop the sites did not note) stops every batch: haltAll. Each
// later round in which the index has decreased (a lower failure arrived,
// or a call-level stop) sends the new index the same way, so the other
// ranks' running batches stop at the lower index too: at most one CANCEL
// per rank per decrease.
func (r *rootLoop[T, U]) stopIfFailing() {
	if !r.failing.Load() {
		return
	}
	low := r.c.low.load()
	if !r.stopping {
		r.stopping = true
		if low == noFailure && !r.causeOnWay {
			r.c.haltAll()
			low = haltAll
		}
		// After the index: a root slot released by the cancellation
		// already reads it.
		r.c.cancel(ErrStopped)
	} else if low >= r.sentLow {
		return
	}
	r.sentLow = low
	for rank := range r.k.Size {
		if rank == r.k.Rank {
			continue
		}
		r.mu.Lock()
		busy := false
		if !r.sch.RankDrained(rank) {
			for s := range r.sch.SlotCount(rank) {
				busy = busy || r.sch.State(rank, s) != sched.StopReceived
			}
		}
		r.mu.Unlock()
		if busy {
			r.send(rank, cancelFrame(low), "CANCEL")
		}
	}
}

// checkContext turns the end of ctx into a call-level failure, once.
func (r *rootLoop[T, U]) checkContext() {
	select {
	case <-r.c.ctx.Done():
	default:
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctxEnded {
		return
	}
	r.ctxEnded = true
	r.c.haltAll()
	r.sch.Fail()
	r.noteFailed()
	err := ctxError(r.c.ctx)
	r.rep.addCall(r.n, sched.ClassDrain, KindCanceled, fmt.Sprintf("rank %d: context done: %v", r.k.Rank, err), err)
}

// ctxError is the error a rank reports for its ended context: ctx.Err(),
// with context.Cause alongside when it says more.
func ctxError(ctx context.Context) error {
	err := ctx.Err()
	if cause := context.Cause(ctx); cause != nil && cause != err {
		return fmt.Errorf("%w (cause: %w)", err, cause)
	}
	return err
}

// pollRemote services at most one waiting scheduler message.
func (r *rootLoop[T, U]) pollRemote() bool {
	if r.k.Size == 1 {
		return false
	}
	ok, src, err := r.k.Iprobe(tagPmap)
	if err != nil {
		r.k.AbortTransport(err)
	}
	if !ok {
		return false
	}
	h, payload, from, err := r.k.RecvFrameTail(src, tagPmap, resultTrailer) // placed for a RESULT's results
	var bodies resultBodies
	if err == nil && h.Kind == wire.KindResult {
		grants := r.place.take(from, h.BatchID)
		unplaceable := h.Status&resultUnplaceable != 0
		h.Status &^= resultUnplaceable
		if h.Status&resultSegmented != 0 {
			h.Status &^= resultSegmented
			payload, bodies, err = recvSegments[U](r.k, from, payload, r.bodyAlloc(), grants)
		}
		r.place.learn(from, bodies, unplaceable)
	}
	if from >= 0 && from < r.k.Size {
		r.recv[from] += int64(wire.HeaderSize + len(payload) + bodies.apart())
	}
	if err != nil {
		var we *wire.Error
		if !errors.As(err, &we) || from < 0 || from >= r.k.Size {
			r.k.AbortTransport(err)
		}
		r.malformed(from, int(h.Slot), we)
		return true
	}
	s := int(h.Slot)
	if from == r.k.Rank || s >= r.sch.SlotCount(from) {
		r.k.AbortProtocol(fmt.Sprintf("%v from rank %d slot %d (of %d)", h.Kind, from, s, r.sch.SlotCount(from)))
	}
	switch h.Kind {
	case wire.KindReady:
		r.onReady(from, s, r.bells.ready(from, h.Status))
	case wire.KindResult:
		tracef("recv-result rank=%d slot=%d bytes=%d", from, s, len(payload)+bodies.apart())
		r.onResult(from, s, h, payload, bodies, r.due.resultIn(from, s, int64(time.Since(r.c.t0))))
	case wire.KindDrain:
		if v, err := parseInt64s(payload); err == nil {
			r.remote[from], r.haveRemote[from] = parseDrainStats(v, from)
		}
		r.locked(func() error { return r.sch.OnDrain(from) })
		tracef("recv-drain rank=%d", from)
	case wire.KindCancel:
		// The rank's context ended; it reports the cancellation itself.
		// Its CANCEL carries haltAll: every batch stops.
		low, err := parseCancel(payload)
		if err != nil {
			r.k.AbortProtocol(fmt.Sprintf("CANCEL from rank %d: %v", from, err))
		}
		r.c.low.lower(low)
		r.mu.Lock()
		r.sch.Fail()
		r.noteFailed()
		r.mu.Unlock()
		tracef("recv-cancel rank=%d", from)
	default:
		r.k.AbortProtocol(fmt.Sprintf("%v from rank %d", h.Kind, from))
	}
	return true
}

// locked applies one transition under mu; a protocol error aborts.
func (r *rootLoop[T, U]) locked(f func() error) {
	r.mu.Lock()
	err := f()
	if err == nil {
		r.noteFailed()
		r.checkDrained()
	}
	r.mu.Unlock()
	if err != nil {
		r.k.AbortProtocol(err.Error())
	}
}

// malformed handles a frame from (rank, slot) that failed to parse. Its
// meaning follows from the slot's state (the only message the slot may send
// there): a RESULT fails the pinned running batch, a READY is answered with
// STOP, a DRAIN still drains; in each case a wire error is recorded. The
// slot number is read from the raw header; one outside the rank's slots
// cannot be attributed and aborts.
func (r *rootLoop[T, U]) malformed(from, s int, we *wire.Error) {
	msg := fmt.Sprintf("rank %d: malformed frame from rank %d: %v", r.k.Rank, from, we)
	r.mu.Lock()
	state, slots, allStopped := r.sch.State(from, s), r.sch.SlotCount(from), r.sch.RankStopped(from)
	r.mu.Unlock()
	switch {
	case s < slots && state == sched.Running:
		r.failRunning(from, s, KindWire, msg, we)
	case s < slots && state == sched.Idle:
		if r.held[from] >= 0 && s == slots-1 {
			// A frame in place of the held READY's slot: that READY
			// is answered now, with the STOP below.
			r.held[from] = -1
			r.nHeld--
		}
		r.c.haltAll() // a call-level failure (task key N)
		r.mu.Lock()
		r.sch.Fail()
		r.noteFailed()
		r.mu.Unlock()
		r.addCallLocked(r.n, sched.ClassWire, KindWire, msg, we)
		r.onReady(from, s, statusOK)
	case allStopped:
		r.addCallLocked(r.n, sched.ClassWire, KindWire, msg, we)
		r.locked(func() error { return r.sch.OnDrain(from) })
	default:
		r.k.AbortProtocol(msg)
	}
}

func (r *rootLoop[T, U]) addCallLocked(taskKey int64, class sched.Class, kind ErrorKind, msg string, err error) {
	r.mu.Lock()
	r.rep.addCall(taskKey, class, kind, msg, err)
	r.mu.Unlock()
}

// onReady answers a READY from (rank, slot) with a TASK or a STOP. The
// TASK is encoded and sent outside the lock, so the root's slots keep
// taking batches meanwhile. A batch whose items cannot be encoded fails:
// under FailFast the call (the READY then gets STOP), under CollectAll
// only the batch's items (the READY gets the next batch).
func (r *rootLoop[T, U]) onReady(from, s int, status uint8) {
	switch status {
	case statusOK:
	case statusCanceled:
		r.c.haltAll()
		r.mu.Lock()
		r.sch.Fail() // the rank itself reports the cancellation
		r.noteFailed()
		r.mu.Unlock()
	default:
		r.k.AbortProtocol(fmt.Sprintf("READY from rank %d with status %d", from, status))
	}
	if r.holdReady(from, s, status) {
		return
	}
	for {
		var d sched.Decision
		var b sched.Batch
		var cost time.Duration
		r.locked(func() (err error) {
			d, b, err = r.sch.OnReady(from, s)
			if d == sched.Assign {
				r.store.assigned(b)
				cost = r.sch.Estimate(from).ItemCost
			}
			return err
		})
		switch d {
		case sched.Wait:
			r.stream.hungry.Store(true)
			r.waiting = append(r.waiting, waitingReady{from, s, status})
			tracef("wait-ready rank=%d slot=%d", from, s)
			return
		case sched.Stop:
			r.send(from, withSlot(stopFrame(int(r.n)), s), "STOP")
			return
		}
		buf, err := taskFrame(r.taskBuf, b.ID, b.Start, r.store.items(b))
		if err == nil {
			buf[2] = r.taskFlags // the header's Status byte
			if t, ok := r.place.grant(from, b.ID, b.Count); ok {
				buf = appendGrants(buf, t)
			}
			buf = r.bells.tail(from, buf)
			n := int64(len(buf))
			r.sendTask(from, withSlot(buf, s)) // nonblocking: buf is the send's until reapTasks
			exec := r.sch.SlotCount(from)
			if r.prefetchSlot[from] {
				exec--
			}
			r.due.taskSent(from, s, int64(time.Since(r.c.t0)), int64(cost)*int64(b.Count), exec, n)
			debugTaskSent()
			return
		}
		r.taskEncodeFailed(from, s, b, err)
	}
}

// holdReady holds the READY of (from, s), with its status, instead of
// answering it, when s is from's prefetch slot, sizes are automatic
// without Options.Prefetch, and the scheduler neither says that from's
// round trip is worth overlapping (Prefetch) nor that every later READY
// gets STOP (Exhausted). The READY is answered (releaseHeld) once either
// turns true: Prefetch after one of from's timed completions (onResult),
// Exhausted whenever a transition makes it so (noteFailed sets
// exhausted, which the coordinator checks every round). The scheduler
// sees the slot Idle meanwhile: it answers the READY when it gets it.
// Coordinator only.
func (r *rootLoop[T, U]) holdReady(from, s int, status uint8) bool {
	if !r.holdable || !r.prefetchSlot[from] || s != r.sch.SlotCount(from)-1 {
		return false
	}
	r.mu.Lock()
	hold := !r.sch.Prefetch(from) && !r.sch.Exhausted()
	r.mu.Unlock()
	if hold {
		r.held[from] = int(status)
		r.nHeld++
		tracef("hold-ready rank=%d slot=%d", from, s)
	}
	return hold
}

// releaseHeld answers every held READY whose rank's prefetch now pays or
// whose answer is STOP (Exhausted). Coordinator only.
func (r *rootLoop[T, U]) releaseHeld() {
	for rank, st := range r.held {
		if st >= 0 {
			r.release(rank)
		}
	}
}

// release answers the held READY of rank's prefetch slot if it no longer
// needs holding (holdReady's test, again: Prefetch and Exhausted are
// sticky, so an answer is never withdrawn).
func (r *rootLoop[T, U]) release(rank int) {
	st := r.held[rank]
	if st < 0 {
		return
	}
	r.held[rank] = -1
	r.nHeld--
	r.onReady(rank, r.sch.SlotCount(rank)-1, uint8(st))
}

// taskEncodeFailed completes batch b, assigned to (from, s), whose items
// could not be encoded.
func (r *rootLoop[T, U]) taskEncodeFailed(from, s int, b sched.Batch, err error) {
	me := r.k.Rank
	pos, known := wire.ItemPosition(err)
	msg := fmt.Sprintf("rank %d: encoding batch %d for rank %d: %v", me, b.ID, from, err)
	if known {
		msg = fmt.Sprintf("rank %d: encoding item %d (batch %d) for rank %d: %v", me, b.Start+pos, b.ID, from, err)
	}
	msg = errmsg.Bound(msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c.collect && known {
		for i := b.Start; i < b.End(); i++ {
			m, e := msg, err
			if i != b.Start+pos {
				m, e = fmt.Sprintf("rank %d: not sent: item %d of the same batch could not be encoded", me, b.Start+pos), nil
			}
			r.note(ItemFailure{Index: i, Kind: KindWire, Rank: me, Message: m, err: e})
		}
		r.rep.addItem(b.Start+pos, sched.ClassWire, KindWire, msg, err)
		if err := r.sch.OnResult(from, s, b.ID, b.Indices(), true); err != nil {
			r.k.AbortProtocol(err.Error())
		}
		r.store.completed(b, true)
		r.failed.Add(int64(b.Count))
	} else {
		if known {
			r.rep.addItem(b.Start+pos, sched.ClassWire, KindWire, msg, err)
			r.c.failAt(int64(b.Start + pos))
		} else {
			r.rep.addCall(int64(b.Start), sched.ClassWire, KindWire, msg, err)
			r.c.failAt(int64(b.Start))
		}
		if _, err := r.sch.FailRunning(from, s); err != nil {
			r.k.AbortProtocol(err.Error())
		}
		r.store.completed(b, false)
		r.failed.Add(1)
	}
	r.finished.Add(int64(b.Count))
	r.noteFailed()
}

func (r *rootLoop[T, U]) send(to int, buf []byte, what string) {
	tracef("send kind=%s to=%d bytes=%d", what, to, len(buf))
	r.sent[to] += int64(len(buf))
	if err := r.k.SendFrame(to, tagPmap, buf); err != nil {
		r.k.AbortTransport(err)
	}
}

// onResult validates a RESULT fully before anything changes, then decodes
// the results into the table (unless the call already failed under
// FailFast, in which case they are discarded) and completes the slot.
// payload is the frame recvFrame received for this message alone, so bulk
// results alias it instead of being copied out (wire.DecodeItemsOwned), or
// the segments received apart from it (bodies, recvSegments).
// Decoding runs outside the lock: the batch's window of the table belongs
// to it alone. rt is the TASK→RESULT time (ns, -1: unknown); with the
// RESULT's timing trailer, clamped (clampTiming), the completion is a
// timed one (OnResultTimed), and a held READY of from's prefetch slot is
// answered once the scheduler says prefetch pays.
func (r *rootLoop[T, U]) onResult(from, s int, h wire.Header, payload []byte, bodies resultBodies, rt int64) {
	r.mu.Lock()
	pinned, _ := r.sch.RunningBatch(from, s)
	r.mu.Unlock()
	indices, rest, err := splitIndices(h, payload)
	if err != nil {
		r.failRunning(from, s, KindWire, fmt.Sprintf("rank %d: RESULT of batch %d from rank %d: %v", r.k.Rank, pinned.ID, from, err), err)
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
	if err == nil && (h.Status > statusPartial || h.Status == statusCanceled || (h.Status == statusPartial && !r.c.collect)) {
		err = fmt.Errorf("unexpected RESULT status %d", h.Status)
	}
	if err != nil {
		r.failRunning(from, s, KindProtocol, fmt.Sprintf("rank %d: RESULT from rank %d: %v", r.k.Rank, from, err), err)
		return
	}
	ok := true
	nfailed := 0
	switch h.Status {
	case statusUser, statusWire:
		ok, nfailed = false, 1 // the rank reports its failure itself
		if !r.c.collect && r.noteRemoteFault(pinned, rest) {
			r.causeOnWay = true
		}
	case statusOK:
		if !failed || r.c.collect {
			ok, nfailed = r.decodeResults(from, pinned, indices, nil, rest, bodies.from(payload, rest), bodies.bufs)
		}
	case statusPartial:
		faults, res, err := parsePartial(rest, indices)
		if err != nil {
			r.failRunning(from, s, KindWire, fmt.Sprintf("rank %d: RESULT of batch %d from rank %d: %v", r.k.Rank, pinned.ID, from, err), err)
			return
		}
		r.mu.Lock()
		for _, f := range faults {
			r.note(ItemFailure{Index: int(f.Index), Kind: ErrorKind(f.Kind), Rank: from, Message: f.Message})
		}
		r.mu.Unlock()
		ok, nfailed = r.decodeResults(from, pinned, indices, faults, res, bodies.from(payload, res), bodies.bufs)
		nfailed += len(faults)
	}
	r.failed.Add(int64(nfailed))
	compute, queued, timed := resultTiming(payload)
	timed = timed && rt >= 0
	release := false
	r.locked(func() error {
		var err error
		if timed {
			t := clampTiming(rt, compute, queued)
			t.Bytes = max(r.due.clock.taskBytes(from, s), int64(len(payload)+bodies.apart()))
			err = r.sch.OnResultTimed(from, s, id, indices, ok, t)
		} else {
			err = r.sch.OnResult(from, s, id, indices, ok)
		}
		if err == nil {
			r.store.completed(pinned, ok)
		}
		release = r.held[from] >= 0 && (r.sch.Prefetch(from) || r.sch.Exhausted())
		return err
	})
	r.finished.Add(int64(len(indices)))
	debugResultReceived()
	if release {
		r.release(from)
	}
}

// noteRemoteFault notes the failing index of a failed FailFast RESULT of
// batch pinned (rest: its payload after the indices, one wireFault): its
// fault's index, the failing item or, for a fault of the whole frame, the
// batch's first index (or less), which is the key the sending rank
// reports. A fault of kind KindCanceled is a consequence of the stop, not
// a failure, and lowers nothing; canceled reports it. Such a batch may
// reach the root before the failure that stopped it, when both are that
// rank's: its slots' RESULTs leave in the order the slots finish, and a
// slot stops before its next item as soon as another slot's item failed.
// A fault that does not decode, or names an index past the batch, is
// noted at the batch's last index, which is no lower than the key its
// rank reports (a fault of the batch lies in it), so no item that could
// still win is skipped.
func (r *rootLoop[T, U]) noteRemoteFault(pinned sched.Batch, rest []byte) (canceled bool) {
	last := int64(pinned.End() - 1)
	f, err := wire.DecodeValue[wireFault](rest)
	switch {
	case err != nil:
		r.c.failAt(last)
	case f.Kind != uint8(KindCanceled):
		r.c.failAt(min(max(f.Index, 0), last))
	default:
		return true
	}
	return false
}

// clampTiming is the Timing of a RESULT that took rt ns from its TASK's
// send, whose trailer says compute and queued (the remote rank's clock,
// possibly garbage): each is clamped into what the round trip leaves
// (0 ≤ compute ≤ rt, 0 ≤ queued ≤ rt − compute), so the scheduler never
// sees a negative or absurd duration.
func clampTiming(rt, compute, queued int64) sched.Timing {
	compute = min(max(compute, 0), rt)
	queued = min(max(queued, 0), rt-compute)
	return sched.Timing{Compute: time.Duration(compute), RoundTrip: time.Duration(rt), Queued: time.Duration(queued)}
}

// decodeResults decodes the results of batch pinned, whose items faults
// name failed (in index order), into the result table. A result that fails
// to decode is a failure of its item (under CollectAll the batch's other
// decoded results are lost with it, each a failure naming that item);
// when the failure cannot be pinned to one item, the batch fails as a
// whole, and so does the call. It returns whether the batch completes
// without failing the call, and how many items it failed. segs are the
// bulk data received apart (offsets in payload), bufs the buffers the
// results may alias, held by the store with the batch (rootStore.hold).
func (r *rootLoop[T, U]) decodeResults(from int, pinned sched.Batch, indices []int64, faults []wireFault, payload []byte, segs []wire.Segment, bufs [][]byte) (bool, int) {
	pos := indices
	if len(faults) > 0 {
		pos = make([]int64, 0, len(indices)-len(faults))
		j := 0
		for _, ix := range indices {
			if j < len(faults) && faults[j].Index == ix {
				j++
				continue
			}
			pos = append(pos, ix)
		}
	}
	vals, err := wire.DecodeItemsSegments[U](payload, len(pos), segs)
	if err == nil {
		r.store.hold(pinned, bufs)
		out := r.store.results(pinned)
		if len(faults) == 0 {
			copy(out, vals)
		} else {
			for q, ix := range pos {
				out[int(ix)-pinned.Start] = vals[q]
			}
		}
		return true, 0
	}
	me := r.k.Rank
	p, known := wire.ItemPosition(err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !known {
		r.rep.addCall(int64(pinned.Start), sched.ClassWire, KindWire,
			fmt.Sprintf("rank %d: decoding the results of batch %d from rank %d: %v", me, pinned.ID, from, err), err)
		r.c.failAt(int64(pinned.Start))
		return false, 0
	}
	bad := int(pos[p])
	msg := errmsg.Bound(fmt.Sprintf("rank %d: decoding the result of item %d (batch %d) from rank %d: %v", me, bad, pinned.ID, from, err))
	r.rep.addItem(bad, sched.ClassWire, KindWire, msg, err)
	if !r.c.collect {
		r.c.failAt(int64(bad))
		return false, 1
	}
	for _, ix := range pos {
		m, e := msg, err
		if int(ix) != bad {
			m, e = fmt.Sprintf("rank %d: result lost: item %d of the same RESULT failed to decode", me, bad), nil
		}
		r.note(ItemFailure{Index: int(ix), Kind: KindWire, Rank: me, Message: m, err: e})
	}
	return true, len(pos)
}

// failRunning fails the batch running on (from, s) with a fault of its
// whole frame, keyed by the batch's first index.
func (r *rootLoop[T, U]) failRunning(from, s int, kind ErrorKind, msg string, err error) {
	var b sched.Batch
	r.locked(func() (ferr error) {
		b, ferr = r.sch.FailRunning(from, s)
		if ferr == nil {
			r.c.failAt(int64(b.Start)) // before locked notes the failure
			r.store.completed(b, false)
		}
		return ferr
	})
	r.finished.Add(int64(b.Count))
	r.addCallLocked(int64(b.Start), sched.ClassWire, kind, msg, err)
}

// taskClock keeps, per remote logical slot, when its outstanding TASK left
// (ns since the call's start, -1: none), for the round trip of its RESULT
// (sched.Timing.RoundTrip), and the TASK's size (sched.Timing.Bytes).
// Coordinator only; fixed tables, so no allocation per message.
type taskClock struct {
	first []int   // per rank, the index of its slot 0 in at
	at    []int64 // per remote slot
	bytes []int64 // per remote slot: its last TASK's frame size
}

// remoteSlotIndex numbers the remote ranks' slots one after the other:
// first[r] is the index of rank r's slot 0 (the root's slots take none), n
// their count.
func remoteSlotIndex(slots []int, root int) (first []int, n int) {
	first = make([]int, len(slots))
	for r, s := range slots {
		first[r] = n
		if r != root {
			n += s
		}
	}
	return first, n
}

func newTaskClock(slots []int, root int) taskClock {
	first, n := remoteSlotIndex(slots, root)
	c := taskClock{first: first}
	c.at, c.bytes = make([]int64, n), make([]int64, n)
	for i := range c.at {
		c.at[i] = -1
	}
	return c
}

// sent records that (rank, slot)'s TASK of size bytes left at now (nothing
// for a slot it does not keep: the root's at world size one).
func (c *taskClock) sent(rank, slot int, now, bytes int64) {
	if i := c.first[rank] + slot; i < len(c.at) {
		c.at[i], c.bytes[i] = now, bytes
	}
}

// taskBytes is the size of (rank, slot)'s last TASK (0: none).
func (c *taskClock) taskBytes(rank, slot int) int64 {
	if i := c.first[rank] + slot; i < len(c.bytes) {
		return c.bytes[i]
	}
	return 0
}

// roundTrip returns the time from (rank, slot)'s TASK to now, its RESULT's
// arrival (-1 with no TASK outstanding), and forgets the TASK.
func (c *taskClock) roundTrip(rank, slot int, now int64) int64 {
	i := c.first[rank] + slot
	if i >= len(c.at) || c.at[i] < 0 {
		return -1
	}
	t := c.at[i]
	c.at[i] = -1
	return max(now-t, 0)
}

// dueTracker times the root coordinator's polls while its slots compute,
// where each timed wake-up of the coordinator costs its core's slot a
// context switch and an MPI progress call (10–20 µs here): rather than wake every back-off step, the coordinator sleeps
// until the next remote RESULT is due (sched.Due: each TASK's expected
// compute from the policy's item cost, queued behind the rank's running
// ones, plus the lateness observed), at most dueMaxSleep, then polls
// briefly for it, so that a remote slot gets its next TASK a few
// microseconds after it finished rather than at the coordinator's next
// back-off step, and the root's slot loses about one wake-up per remote
// batch instead of one per poll interval.
//
// It also keeps, per remote slot, when its TASK was sent (clock, which
// gives every RESULT's round trip to the batch-size policy, timed polls or
// not). The timed polls are on only when at most dueSlots remote slots
// take part. Coordinator only.
type dueTracker struct {
	clock taskClock
	on    bool // the timed polls are in use
	model *sched.Due
}

const dueSlots = 16

// dueEarly is how much before a RESULT is due the coordinator wakes (its
// timer's latency); dueSpin is how long past that it polls without
// sleeping (ended by the RESULT); dueMaxSleep bounds one sleep (the
// longest a message the model does not predict, such as a CANCEL, waits).
var (
	dueEarly    = 3 * time.Microsecond
	dueSpin     = 10 * time.Microsecond
	dueMaxSleep = time.Millisecond
)

func newDueTracker(slots []int, root int) dueTracker {
	c := newTaskClock(slots, root)
	return dueTracker{clock: c, on: len(c.at) > 0 && len(c.at) <= dueSlots, model: sched.NewDue(slots, root)}
}

// active reports whether the timed polls are in use (not with no or too
// many remote slots).
func (d *dueTracker) active() bool { return d.on }

// taskSent records that (rank, slot)'s TASK of size bytes left at now, with
// work ns of expected compute (0: unknown), rank having exec executor slots.
func (d *dueTracker) taskSent(rank, slot int, now, work int64, exec int, bytes int64) {
	d.clock.sent(rank, slot, now, bytes)
	if d.on {
		d.model.Sent(rank, slot, now, work, exec)
	}
}

// resultIn records that (rank, slot)'s RESULT was received at now and
// returns its round trip (-1 with no TASK outstanding).
func (d *dueTracker) resultIn(rank, slot int, now int64) int64 {
	c := d.clock.roundTrip(rank, slot, now)
	if d.on && c >= 0 {
		d.model.Arrived(rank, slot, now)
	}
	return c
}

// next returns how long from now until the earliest outstanding RESULT is
// due (negative: overdue by that much); ok is false when none is
// outstanding with a prediction.
func (d *dueTracker) next(now int64) (until time.Duration, ok bool) {
	if !d.on {
		return 0, false
	}
	u, ok := d.model.Next(now)
	return time.Duration(u), ok
}
