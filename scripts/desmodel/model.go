package main

import (
	"container/heap"
	"fmt"
	"slices"
	"time"

	"github.com/hataori/hataori-go/internal/sched"
)

// Config is one modelled Pmap call: Ranks ranks (rank 0 is the root) of
// SlotsPerRank executor slots each, Items items costing Dist, dealt by
// Policy, with the per-message costs Costs.
type Config struct {
	Ranks, SlotsPerRank int
	Items               int
	Dist                Dist
	Policy              Policy
	Costs               Costs
}

// Slots is the call's executor slot count.
func (c Config) Slots() int { return c.Ranks * c.SlotsPerRank }

// Result is what one modelled call shows.
type Result struct {
	Config
	// Makespan is the modelled call's length; Work the items' total cost.
	Makespan, Work time.Duration
	// Eff is the useful computing (items only) of all slots over the
	// steady window (from 10 % to 90 % of the work completed) divided by
	// slots × window: throughput against the ideal of every slot always
	// computing. EffMakespan is Work / (slots × Makespan), start-up and
	// tail included.
	Eff, EffMakespan float64
	// CoordUtil and LockUtil are the shares of the steady window in which
	// the root's coordinator was busy (receiving, deciding, waiting for
	// the lock, sending) and its scheduler lock was held.
	CoordUtil, LockUtil float64
	// DealRate is batches dealt per second in the window (root slots
	// included), RemoteRate the remote ones (TASKs), ItemRate items
	// completed per second.
	DealRate, RemoteRate, ItemRate float64
	// Batches is the number of batches; MeanBatch their mean size.
	Batches   int64
	MeanBatch float64
	// Events is how many events the run took (its cost to model).
	Events int64
}

// event is one scheduled action of the modelled clock; seq breaks ties in
// the order of scheduling, so a run is deterministic.
type event struct {
	t   time.Duration
	seq uint64
	fn  func()
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	return q[i].t < q[j].t || (q[i].t == q[j].t && q[i].seq < q[j].seq)
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// msgKind is the kind of a message in a coordinator's queue.
type msgKind uint8

const (
	mReady  msgKind = iota // remote -> root; implicit (first deal) when first is set
	mResult                // remote -> root
	mDrain                 // remote -> root
	mTask                  // root -> remote
	mStop                  // root -> remote
	mDone                  // a remote slot's finished batch -> its coordinator
)

type msg struct {
	kind      msgKind
	rank      int // the remote rank it is from or to
	slot      int // logical slot
	implicit  bool
	batch     sched.Batch
	compute   time.Duration // mDone, mResult: the items' time on the slot
	queued    time.Duration // mDone, mResult: the TASK's wait for a free slot
	enqueued  time.Duration // mTask: when the rank queued it for its slots
	firstSent time.Duration // mTask, mDone, mResult: when the root sent the TASK
}

// server is a coordinator: one message at a time, in arrival order.
type server struct {
	queue []msg
	front []msg // taken before queue: READYs released from being held
	busy  bool
	spans []span // busy intervals
}

type span struct{ from, to time.Duration }

// remoteRank is a non-root rank: its coordinator, its logical slots (the
// real sched.Remote), the TASK queue its executor slots take from.
type remoteRank struct {
	coord server
	w     *sched.Remote
	jobs  []msg // TASKs waiting for an executor slot
	free  int   // idle executor slots
}

// batchRec is one completed batch, for the window measurements.
type batchRec struct {
	start, end time.Duration
	work       time.Duration
	n          int
}

type sim struct {
	cfg     Config
	c       Costs
	now     time.Duration
	seq     uint64
	q       eventQueue
	d       Dealer
	events  int64
	logical int // logical slots per remote rank

	root      server
	lockFree  time.Duration
	lockSpans []span
	rootSlots []sched.Batch   // running batch per root slot
	rootWork  []time.Duration // its items' cost
	rootLeft  int             // root slots not stopped
	ranks     []*remoteRank
	held      []bool // held[r]: rank r's extra logical slot's READY is held back
	nHeld     int
	deals     []time.Duration // time of every Assign
	remote    []time.Duration // time of every remote Assign
	done      []batchRec
	err       error
}

// Run models one call and returns what it shows. It fails on a scheduler
// error (a transition the protocol refuses) or when the call does not
// finish with every item completed once.
func Run(cfg Config) (Result, error) {
	if cfg.Ranks < 1 || cfg.SlotsPerRank < 1 || cfg.Items < 0 {
		return Result{}, fmt.Errorf("desmodel: bad layout %d ranks × %d slots, %d items", cfg.Ranks, cfg.SlotsPerRank, cfg.Items)
	}
	s := &sim{cfg: cfg, c: cfg.Costs, logical: cfg.SlotsPerRank}
	if cfg.Policy.Prefetch || cfg.Policy.Batch <= 0 {
		// Bounded prefetch: one logical slot more. With automatic sizes
		// the root answers it once sched.Prefetch says so.
		s.logical++
	}
	slots := make([]int, cfg.Ranks)
	slots[0] = cfg.SlotsPerRank
	for r := 1; r < cfg.Ranks; r++ {
		slots[r] = s.logical
	}
	d, err := NewDealer(cfg.Policy, cfg.Items, slots)
	if err != nil {
		return Result{}, err
	}
	s.d = d
	s.rootSlots = make([]sched.Batch, cfg.SlotsPerRank)
	s.rootWork = make([]time.Duration, cfg.SlotsPerRank)
	s.rootLeft = cfg.SlotsPerRank
	s.ranks = make([]*remoteRank, cfg.Ranks)
	s.held = make([]bool, cfg.Ranks)
	for r := 1; r < cfg.Ranks; r++ {
		rr := &remoteRank{w: sched.NewRemote(r, s.logical), free: cfg.SlotsPerRank}
		// The first READY stands for a READY of every logical slot.
		for j := range s.logical {
			s.fail(rr.w.SendReady(j))
		}
		s.ranks[r] = rr
	}
	// t = 0 is the scheduler's creation: the first READYs are in
	// (collectSlots). The root's slots take their batches themselves
	// while the coordinator answers the first READYs, slot-major across
	// the ranks (rootLoop.firstDeal).
	for j := range cfg.SlotsPerRank {
		s.at(0, func() { s.rootSlotFree(j, false) })
	}
	for j := range s.logical {
		for r := 1; r < cfg.Ranks; r++ {
			s.root.queue = append(s.root.queue, msg{kind: mReady, rank: r, slot: j, implicit: true})
		}
	}
	s.at(0, s.rootWake)
	for s.q.Len() > 0 && s.err == nil {
		e := heap.Pop(&s.q).(event)
		s.now = e.t
		s.events++
		e.fn()
	}
	if s.err != nil {
		return Result{}, s.err
	}
	if !d.Done() {
		return Result{}, fmt.Errorf("desmodel: no events left and the call is not done")
	}
	if err := d.Check(); err != nil {
		return Result{}, err
	}
	if d.Completed() != cfg.Items {
		return Result{}, fmt.Errorf("desmodel: %d of %d items completed", d.Completed(), cfg.Items)
	}
	return s.result(), nil
}

func (s *sim) fail(err error) {
	if err != nil && s.err == nil {
		s.err = err
	}
}

// at schedules fn at time t (>= now).
func (s *sim) at(t time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.q, event{t: t, seq: s.seq, fn: fn})
}

// lock queues for the root's scheduler lock at now and returns when it is
// released again after a hold of c.Lock; the transition happens now (the
// lock is FIFO and requests come in time order, so this is its order).
func (s *sim) lock() time.Duration {
	g := max(s.now, s.lockFree)
	s.lockFree = g + s.c.Lock
	if s.c.Lock > 0 {
		s.lockSpans = append(s.lockSpans, span{g, s.lockFree})
	}
	return s.lockFree
}

func (s *sim) work(b sched.Batch) time.Duration { return s.cfg.Dist.Work(b.Start, b.Count) }

// rootSlotFree: root slot j finished its batch (or starts): complete and
// take the next batch under the lock (rootLoop.next).
func (s *sim) rootSlotFree(j int, running bool) {
	release := s.lock()
	if running {
		b := s.rootSlots[j]
		s.fail(s.d.CompleteRoot(j, b, Completion{Compute: s.rootWork[j]}, s.now))
	}
	dec, b, err := s.d.RootDispatch(j, s.now)
	s.fail(err)
	s.releaseHeld(-1)
	if dec != sched.Assign {
		s.rootLeft--
		if s.rootLeft == 0 {
			s.at(release, func() { s.fail(s.d.OnDrain(0)) })
		}
		return
	}
	s.deals = append(s.deals, s.now)
	s.rootSlots[j] = b
	w := s.work(b)
	s.rootWork[j] = w
	end := release + w
	s.done = append(s.done, batchRec{start: release, end: end, work: w, n: b.Count})
	s.at(end, func() { s.rootSlotFree(j, true) })
}

// rootWake starts the root coordinator's next message if it is idle.
func (s *sim) rootWake() {
	if s.root.busy || len(s.root.front)+len(s.root.queue) == 0 {
		return
	}
	var m msg
	if len(s.root.front) > 0 {
		m, s.root.front = s.root.front[0], s.root.front[1:]
	} else {
		m, s.root.queue = s.root.queue[0], s.root.queue[1:]
	}
	s.root.busy = true
	begin := s.now
	recv := s.c.Recv
	if m.implicit {
		recv = 0 // received before the scheduler existed
	}
	if m.kind == mResult {
		recv += time.Duration(m.batch.Count) * s.c.Dec
	}
	s.at(s.now+recv, func() { s.rootDecide(m, begin) })
}

// rootDecide is the coordinator's transition under the lock, then its
// send (for a READY), then its next message.
func (s *sim) rootDecide(m msg, begin time.Duration) {
	release := s.lock()
	end := release
	switch m.kind {
	case mResult:
		c := Completion{Compute: m.compute, RoundTrip: s.now - m.firstSent, Queued: m.queued}
		s.fail(s.d.OnResult(m.rank, m.slot, m.batch, c, s.now))
		s.releaseHeld(m.rank)
	case mDrain:
		s.fail(s.d.OnDrain(m.rank))
	case mReady:
		if s.d.Automatic() && m.slot == s.logical-1 && !s.d.Prefetch(m.rank) && !s.d.Exhausted() {
			// The prefetch slot's READY waits until the measurements
			// call for it (or the input runs out).
			s.held[m.rank] = true
			s.nHeld++
			break
		}
		dec, b, err := s.d.OnReady(m.rank, m.slot, s.now)
		s.fail(err)
		s.releaseHeld(-1)
		end += s.c.Send
		out := msg{kind: mStop, rank: m.rank, slot: m.slot}
		if dec == sched.Assign {
			end += time.Duration(b.Count) * s.c.Enc
			out = msg{kind: mTask, rank: m.rank, slot: m.slot, batch: b, firstSent: end}
			s.deals = append(s.deals, s.now)
			s.remote = append(s.remote, s.now)
		}
		s.at(end+s.c.Hop, func() { s.remoteArrive(out) })
	}
	s.root.spans = append(s.root.spans, span{begin, end})
	s.at(end, func() { s.root.busy = false; s.rootWake() })
}

// releaseHeld answers held prefetch READYs that may now be answered: of
// rank (after one of its completions), or of every rank once the input is
// exhausted (rank -1). They go to the front of the coordinator's queue,
// already received.
func (s *sim) releaseHeld(rank int) {
	if s.nHeld == 0 {
		return
	}
	if rank >= 0 {
		if s.held[rank] && s.d.Prefetch(rank) {
			s.unhold(rank)
		}
		return
	}
	if !s.d.Exhausted() {
		return
	}
	for r := range s.held {
		if s.held[r] {
			s.unhold(r)
		}
	}
}

func (s *sim) unhold(r int) {
	s.held[r] = false
	s.nHeld--
	s.root.front = append(s.root.front, msg{kind: mReady, rank: r, slot: s.logical - 1, implicit: true})
	s.at(s.now, s.rootWake)
}

// rootArrive: a message reaches the root.
func (s *sim) rootArrive(m msg) {
	s.root.queue = append(s.root.queue, m)
	s.rootWake()
}

// remoteArrive: a message (TASK, STOP, or a slot's finished batch) reaches
// rank m.rank's coordinator.
func (s *sim) remoteArrive(m msg) {
	rr := s.ranks[m.rank]
	rr.coord.queue = append(rr.coord.queue, m)
	s.remoteWake(m.rank)
}

func (s *sim) remoteWake(rank int) {
	rr := s.ranks[rank]
	if rr.coord.busy || len(rr.coord.queue) == 0 {
		return
	}
	m := rr.coord.queue[0]
	rr.coord.queue = rr.coord.queue[1:]
	rr.coord.busy = true
	begin := s.now
	var end time.Duration
	switch m.kind {
	case mTask:
		end = s.now + s.c.Recv
		s.fail(rr.w.OnTask(m.slot, m.batch.ID))
		s.at(end, func() {
			m.enqueued = s.now
			rr.jobs = append(rr.jobs, m)
			s.startJobs(rank, s.c.Handoff)
		})
	case mStop:
		end = s.now + s.c.Recv
		s.fail(rr.w.OnStop(m.slot))
		if rr.w.Stopped() {
			s.fail(rr.w.SendDrain())
			end += s.c.Send
			s.at(end+s.c.Hop, func() { s.rootArrive(msg{kind: mDrain, rank: rank}) })
		}
	case mDone:
		// RESULT, then that logical slot's next READY.
		s.fail(rr.w.SendResult(m.slot))
		s.fail(rr.w.SendReady(m.slot))
		end = s.now + 2*s.c.Send
		res := msg{kind: mResult, rank: rank, slot: m.slot, batch: m.batch, compute: m.compute, queued: m.queued, firstSent: m.firstSent}
		rdy := msg{kind: mReady, rank: rank, slot: m.slot}
		s.at(end-s.c.Send+s.c.Hop, func() { s.rootArrive(res) })
		s.at(end+s.c.Hop, func() { s.rootArrive(rdy) })
	}
	rr.coord.spans = append(rr.coord.spans, span{begin, end})
	s.at(end, func() { rr.coord.busy = false; s.remoteWake(rank) })
}

// startJobs hands queued TASKs to idle executor slots; each starts after
// delay (the coordinator's hand-off; zero when the slot takes the next job
// itself).
func (s *sim) startJobs(rank int, delay time.Duration) {
	rr := s.ranks[rank]
	for rr.free > 0 && len(rr.jobs) > 0 {
		m := rr.jobs[0]
		rr.jobs = rr.jobs[1:]
		rr.free--
		start := s.now + delay
		w := s.work(m.batch)
		n := time.Duration(m.batch.Count)
		end := start + n*s.c.Dec + w + n*s.c.Enc
		s.done = append(s.done, batchRec{start: start + n*s.c.Dec, end: start + n*s.c.Dec + w, work: w, n: m.batch.Count})
		m.compute = w
		m.queued = s.now - m.enqueued
		s.at(end, func() {
			rr.free++
			done := msg{kind: mDone, rank: rank, slot: m.slot, batch: m.batch, compute: m.compute, queued: m.queued, firstSent: m.firstSent}
			s.at(s.now+s.c.Handoff, func() { s.remoteArrive(done) })
			s.startJobs(rank, 0)
		})
	}
}

// result computes the window measurements.
func (s *sim) result() Result {
	r := Result{Config: s.cfg, Makespan: s.now, Events: s.events, Batches: int64(len(s.done))}
	for _, b := range s.done {
		r.Work += b.work
	}
	slots := float64(s.cfg.Slots())
	if r.Makespan > 0 {
		r.EffMakespan = float64(r.Work) / (slots * float64(r.Makespan))
	}
	if len(s.done) > 0 {
		r.MeanBatch = float64(s.cfg.Items) / float64(len(s.done))
	}
	// The window: from 10 % to 90 % of the work completed, by batch end.
	ends := slices.Clone(s.done)
	slices.SortFunc(ends, func(a, b batchRec) int { return cmpDur(a.end, b.end) })
	var acc time.Duration
	var lo, hi time.Duration
	loSet := false
	for _, b := range ends {
		acc += b.work
		if !loSet && float64(acc) >= 0.1*float64(r.Work) {
			lo, loSet = b.end, true
		}
		if float64(acc) >= 0.9*float64(r.Work) {
			hi = b.end
			break
		}
	}
	if hi <= lo {
		// Too few batches for a window: use the whole call.
		lo, hi = 0, r.Makespan
	}
	win := float64(hi - lo)
	if win <= 0 {
		r.Eff = 1
		return r
	}
	var busy float64
	var items int
	for _, b := range s.done {
		busy += overlap(b.start, b.end, lo, hi)
		if b.end > lo && b.end <= hi {
			items += b.n
		}
	}
	r.Eff = busy / (slots * win)
	r.CoordUtil = spanShare(s.root.spans, lo, hi)
	r.LockUtil = spanShare(s.lockSpans, lo, hi)
	sec := win / 1e9
	r.DealRate = float64(countIn(s.deals, lo, hi)) / sec
	r.RemoteRate = float64(countIn(s.remote, lo, hi)) / sec
	r.ItemRate = float64(items) / sec
	return r
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func overlap(a, b, lo, hi time.Duration) float64 {
	a, b = max(a, lo), min(b, hi)
	if b <= a {
		return 0
	}
	return float64(b - a)
}

func spanShare(sp []span, lo, hi time.Duration) float64 {
	var t float64
	for _, x := range sp {
		t += overlap(x.from, x.to, lo, hi)
	}
	return t / float64(hi-lo)
}

func countIn(ts []time.Duration, lo, hi time.Duration) int {
	n := 0
	for _, t := range ts {
		if t >= lo && t < hi {
			n++
		}
	}
	return n
}
