package sched

import (
	"cmp"
	"fmt"
	"math"
)

// Config describes one Pmap call as the root sees it.
type Config struct {
	// Items is the number of input items (N >= 0); with Open, the number
	// available at the start (more come with Extend).
	Items int
	// Open: the input's length is not known yet (a stream). Items grows
	// with Extend until CloseInput; meanwhile a dispatch that finds no
	// item available (or, with a fixed BatchSize, fewer than a batch)
	// returns Wait instead of Stop, the factoring share is taken of
	// Window (the remainder is not known yet, and the engine holds up to
	// Window items: what is available says only how far its reader is
	// ahead), a batch never takes more than what is available, and no
	// per-index table is kept (IsDone reports false). Once the input is
	// closed the share is the usual one, of what remains.
	Open bool
	// Window is, with Open, the most items the engine holds at once (read
	// and not yet through its consumer); 0 means the items available.
	Window int
	// BatchSize is the fixed batch size (>= 1), or 0 for automatic sizes
	// (see the package documentation). A fixed size gives batch k the
	// indices [k·BatchSize, min((k+1)·BatchSize, Items)); automatic
	// batches have sizes of their own, so only a Batch's Start and Count
	// say which indices it holds.
	BatchSize int
	// Root is the rank that owns the queue, in [0, len(Slots)).
	Root int
	// Slots[r] is the number of slots (workers) rank r offers, each >= 1;
	// len(Slots) is the world size of the private communicator (>= 1).
	Slots []int
	// MaxBatchBytes bounds the bytes of an automatic batch (see
	// MaxBatchBytes, the default when zero or less).
	MaxBatchBytes int64
}

// Stats is the scheduler's instrumentation.
type Stats struct {
	// Assigned counts batches handed out (root slots included).
	Assigned int64
	// Results counts completions processed (RESULT, root completion or
	// FailRunning).
	Results int64
	// Stops[rank][slot] counts the STOP decisions given to that slot.
	Stops [][]int
	// Drains[rank] counts the rank's DRAIN transitions.
	Drains []int
	// Batches[rank][slot] counts the batches assigned to that slot.
	Batches [][]int64
	// Items[rank][slot] counts the items assigned to that slot.
	Items [][]int64
	// Sizes[rank][slot] summarises the sizes of the batches assigned to
	// that slot, RankSizes[rank] those of all the rank's slots.
	Sizes     [][]Sizes
	RankSizes []Sizes
	// Estimates[rank] is the policy's view of the rank when Stats was
	// called (ItemCost, Overhead, the current Size, Prefetch).
	Estimates []Estimate
}

// slot is the root's view of one (rank, slot) pair.
type slot struct {
	state State
	batch Batch // pinned metadata of the running batch
}

// Scheduler is the root's state machine. It is not safe for concurrent
// use; the coordinator goroutine owns it.
type Scheduler struct {
	cfg       Config
	maxBytes  int64 // the byte bound of an automatic batch (Config.MaxBatchBytes, or MaxBatchBytes)
	next      int   // first index not yet assigned
	nextID    int64 // id of the next batch
	slots     [][]slot
	drainedR  []bool // drainedR[r]: rank r sent its DRAIN
	done      []bool // done[i]: index i completed successfully
	completed int
	failed    bool
	closed    bool // the input's length is final (always, unless Config.Open)
	drained   int  // ranks drained
	stats     Stats

	pol        []rankPolicy // per rank: the measurements
	hist       [][]SizeHist // per (rank, slot): the sizes assigned
	totalSlots int          // Σ Slots
	remote     int          // the slots of the ranks other than the root
	running    int          // those of them Running
}

// New validates cfg and returns a scheduler with every slot Idle. The
// Slots slice is copied.
func New(cfg Config) (*Scheduler, error) {
	cfgErr := func(format string, args ...any) error {
		return &Error{Op: "New", Rank: -1, Msg: fmt.Sprintf(format, args...), Err: ErrConfig}
	}
	switch {
	case cfg.Items < 0:
		return nil, cfgErr("negative item count %d", cfg.Items)
	case cfg.BatchSize < 0:
		return nil, cfgErr("negative batch size %d", cfg.BatchSize)
	case len(cfg.Slots) < 1:
		return nil, cfgErr("world size %d < 1", len(cfg.Slots))
	case cfg.Root < 0 || cfg.Root >= len(cfg.Slots):
		return nil, cfgErr("root %d outside [0,%d)", cfg.Root, len(cfg.Slots))
	}
	for r, n := range cfg.Slots {
		if n < 1 {
			return nil, &Error{Op: "New", Rank: r, Msg: fmt.Sprintf("slot count %d < 1", n), Err: ErrConfig}
		}
	}
	ranks := len(cfg.Slots)
	cfg.Slots = append([]int(nil), cfg.Slots...)
	s := &Scheduler{
		cfg:      cfg,
		maxBytes: cmp.Or(max(cfg.MaxBatchBytes, 0), MaxBatchBytes),
		slots:    make([][]slot, ranks),
		drainedR: make([]bool, ranks),
		closed:   !cfg.Open,
		pol:      make([]rankPolicy, ranks),
		hist:     make([][]SizeHist, ranks),
		stats: Stats{
			Stops:   make([][]int, ranks),
			Drains:  make([]int, ranks),
			Batches: make([][]int64, ranks),
			Items:   make([][]int64, ranks),
		},
	}
	for r, n := range cfg.Slots {
		s.slots[r] = make([]slot, n)
		s.stats.Stops[r] = make([]int, n)
		s.stats.Batches[r] = make([]int64, n)
		s.stats.Items[r] = make([]int64, n)
		s.hist[r] = make([]SizeHist, n)
		s.totalSlots += n
	}
	s.remote = s.totalSlots - cfg.Slots[cfg.Root]
	if !cfg.Open {
		s.done = make([]bool, cfg.Items)
	}
	return s, nil
}

// Extend makes n more items available at the end of an open input (see
// Config.Open). It is an error after CloseInput, for a negative n, or when
// the count would overflow.
func (s *Scheduler) Extend(n int) error {
	switch {
	case s.closed:
		return protoErr("Extend", -1, "input already closed")
	case n < 0 || s.cfg.Items > math.MaxInt-n:
		return &Error{Op: "Extend", Rank: -1, Msg: fmt.Sprintf("%d more items after %d", n, s.cfg.Items), Err: ErrOverflow}
	}
	s.cfg.Items += n
	return nil
}

// CloseInput fixes the input's length at the items made available so far:
// from now on a dispatch past them gets Stop. Idempotent.
func (s *Scheduler) CloseInput() { s.closed = true }

// Items returns the number of input items available so far (the final
// count once the input is closed).
func (s *Scheduler) Items() int { return s.cfg.Items }

// Next returns the first index not yet assigned.
func (s *Scheduler) Next() int { return s.next }

// SlotCount returns the number of slots rank offers (0 for an invalid rank).
func (s *Scheduler) SlotCount(rank int) int {
	if rank < 0 || rank >= len(s.slots) {
		return 0
	}
	return len(s.slots[rank])
}

// State returns the state of (rank, slot) (Drained for an invalid rank or
// slot).
func (s *Scheduler) State(rank, slot int) State {
	if !s.valid(rank, slot) {
		return Drained
	}
	return s.slots[rank][slot].state
}

// RankDrained reports whether rank has drained (false for an invalid rank).
func (s *Scheduler) RankDrained(rank int) bool {
	return rank >= 0 && rank < len(s.drainedR) && s.drainedR[rank]
}

// RankStopped reports whether every slot of rank got STOP and the rank has
// not drained yet: its DRAIN is the only message it may still send.
func (s *Scheduler) RankStopped(rank int) bool {
	if rank < 0 || rank >= len(s.slots) || s.drainedR[rank] || len(s.slots[rank]) == 0 {
		return false
	}
	for _, l := range s.slots[rank] {
		if l.state != StopReceived {
			return false
		}
	}
	return true
}

// RunningBatch returns the batch pinned on (rank, slot), if it is Running.
func (s *Scheduler) RunningBatch(rank, slot int) (Batch, bool) {
	if !s.valid(rank, slot) || s.slots[rank][slot].state != Running {
		return Batch{}, false
	}
	return s.slots[rank][slot].batch, true
}

// RemoteBusy reports whether every slot of every rank other than the root
// is Running (holds a batch whose RESULT has not come in): none of them
// waits for an answer. False when the root is the only rank. O(1).
func (s *Scheduler) RemoteBusy() bool { return s.remote > 0 && s.running == s.remote }

// Failed reports whether a recoverable error has been recorded.
func (s *Scheduler) Failed() bool { return s.failed }

// Fail records a recoverable call-level error: from now on nothing is
// assigned and every READY gets STOP.
func (s *Scheduler) Fail() { s.failed = true }

// Done reports whether every rank, the root included, has drained.
func (s *Scheduler) Done() bool { return s.drained == len(s.slots) }

// Completed returns how many indices completed successfully.
func (s *Scheduler) Completed() int { return s.completed }

// IsDone reports whether index i completed successfully.
func (s *Scheduler) IsDone(i int) bool { return i >= 0 && i < len(s.done) && s.done[i] }

// Exhausted reports whether every later READY or root dispatch gets STOP:
// the call has failed or every index has been assigned. An engine that
// holds a READY back (a prefetch slot the measurements do not call for
// yet) must answer it once this turns true.
func (s *Scheduler) Exhausted() bool { return s.failed || (s.closed && s.next >= s.cfg.Items) }

// Stats returns a deep copy of the instrumentation counters, with the
// size summaries and estimates computed now (cost O(slots·distinct sizes)).
func (s *Scheduler) Stats() Stats {
	st := s.stats
	st.Drains = append([]int(nil), s.stats.Drains...)
	st.Stops = make([][]int, len(s.stats.Stops))
	st.Batches = make([][]int64, len(s.stats.Batches))
	st.Items = make([][]int64, len(s.stats.Items))
	for r := range s.stats.Stops {
		st.Stops[r] = append([]int(nil), s.stats.Stops[r]...)
		st.Batches[r] = append([]int64(nil), s.stats.Batches[r]...)
		st.Items[r] = append([]int64(nil), s.stats.Items[r]...)
	}
	st.Sizes = make([][]Sizes, len(s.hist))
	st.RankSizes = make([]Sizes, len(s.hist))
	st.Estimates = make([]Estimate, len(s.hist))
	for r, hs := range s.hist {
		st.Sizes[r] = make([]Sizes, len(hs))
		for j, h := range hs {
			st.Sizes[r][j] = summary(h)
		}
		st.RankSizes[r] = summary(hs...)
		st.Estimates[r] = s.Estimate(r)
	}
	return st
}

// OnReady handles a READY from slot of remote rank: the rank must not be
// the root nor drained, and the slot must be Idle. It returns Assign with
// a new batch (slot Running) or Stop (slot StopReceived).
func (s *Scheduler) OnReady(rank, slot int) (Decision, Batch, error) {
	const op = "OnReady"
	if err := s.checkSlot(op, rank, slot); err != nil {
		return 0, Batch{}, err
	}
	if rank == s.cfg.Root {
		return 0, Batch{}, protoErr(op, rank, "the root sends no READY")
	}
	return s.dispatch(op, rank, slot)
}

// RootDispatch offers the root's own idle slot a batch, as a READY would.
// It is a protocol error while that slot is not Idle; an idle root slot
// with no assignable work (or after a failure) becomes StopReceived.
func (s *Scheduler) RootDispatch(slot int) (Decision, Batch, error) {
	const op = "RootDispatch"
	if err := s.checkSlot(op, s.cfg.Root, slot); err != nil {
		return 0, Batch{}, err
	}
	return s.dispatch(op, s.cfg.Root, slot)
}

func (s *Scheduler) dispatch(op string, rank, slot int) (Decision, Batch, error) {
	l := &s.slots[rank][slot]
	if l.state != Idle {
		return 0, Batch{}, slotErr(op, rank, slot, "slot is %v, want Idle", l.state)
	}
	if s.Exhausted() {
		l.state = StopReceived // via ReadySent
		s.stats.Stops[rank][slot]++
		return Stop, Batch{}, nil
	}
	rem := s.cfg.Items - s.next
	if !s.closed && (rem == 0 || rem < s.cfg.BatchSize) {
		return Wait, Batch{}, nil // the slot stays Idle
	}
	if s.nextID == math.MaxInt64 {
		return 0, Batch{}, &Error{Op: op, Rank: rank, Msg: fmt.Sprintf("slot %d: batch id space exhausted", slot), Err: ErrOverflow}
	}
	base := rem
	if !s.closed {
		base = max(rem, s.cfg.Window)
	}
	n := min(s.size(rank, base), rem)
	b := Batch{ID: s.nextID, Start: s.next, Count: n}
	s.nextID++
	s.next += n
	l.state = Running // via ReadySent
	l.batch = b
	if rank != s.cfg.Root {
		s.running++
	}
	s.stats.Assigned++
	s.stats.Batches[rank][slot]++
	s.stats.Items[rank][slot] += int64(n)
	s.hist[rank][slot].add(n)
	return Assign, b, nil
}

// OnResult handles the RESULT of the running batch of slot on remote
// rank. The slot state, batch id, count and exact index sequence are all
// checked before anything changes; on any mismatch it returns a protocol
// error and the tables are untouched. ok=false (a callback error in the
// batch) records a recoverable failure. On success the indices are marked
// complete. The slot is Idle again afterwards. It is OnResultTimed
// without a measurement: automatic sizes learn nothing from it.
func (s *Scheduler) OnResult(rank, slot int, id int64, indices []int64, ok bool) error {
	if err := s.ValidateResult(rank, slot, id, indices); err != nil {
		return err
	}
	s.complete(rank, &s.slots[rank][slot], ok, nil)
	return nil
}

// OnResultTimed is OnResult with the batch's measurement t: t.Compute as
// the remote rank measured it, t.RoundTrip from the TASK's send to the
// RESULT's receipt on the root's clock, t.Queued the time the TASK waited
// on the remote rank before it started. A successful (ok) batch updates
// rank's estimates (cost O(OverheadWindow·log OverheadWindow));
// a failed one, whose items may have stopped early, does not. A negative
// duration is a protocol error that changes nothing, like a bad index.
func (s *Scheduler) OnResultTimed(rank, slot int, id int64, indices []int64, ok bool, t Timing) error {
	if err := s.ValidateResult(rank, slot, id, indices); err != nil {
		return err
	}
	if !t.valid() {
		return slotErr("OnResult", rank, slot, "batch %d: negative duration in %+v", id, t)
	}
	s.complete(rank, &s.slots[rank][slot], ok, &t)
	return nil
}

// ValidateResult performs OnResult's checks without changing anything, so
// a caller can validate a RESULT before decoding its payload. Its errors
// are OnResult's (Op "OnResult").
func (s *Scheduler) ValidateResult(rank, slot int, id int64, indices []int64) error {
	const op = "OnResult"
	if err := s.checkSlot(op, rank, slot); err != nil {
		return err
	}
	if rank == s.cfg.Root {
		return protoErr(op, rank, "the root sends no RESULT")
	}
	l := &s.slots[rank][slot]
	if l.state != Running {
		return slotErr(op, rank, slot, "slot is %v, want Running", l.state)
	}
	b := l.batch
	if id != b.ID {
		return slotErr(op, rank, slot, "batch id %d, want %d", id, b.ID)
	}
	if len(indices) != b.Count {
		return slotErr(op, rank, slot, "batch %d: %d indices, want %d", id, len(indices), b.Count)
	}
	for k, ix := range indices {
		if ix != int64(b.Start+k) {
			return slotErr(op, rank, slot, "batch %d: index %d at position %d, want %d", id, ix, k, b.Start+k)
		}
	}
	return nil
}

// CompleteRoot records the completion of the batch running on the root's
// own slot (handed off directly, so there are no indices to check). It is
// CompleteRootTimed without a measurement.
func (s *Scheduler) CompleteRoot(slot int, ok bool) error {
	return s.completeRoot(slot, ok, nil)
}

// CompleteRootTimed is CompleteRoot with the batch's measurement: t.Compute
// is the time the slot spent in the batch's items; RoundTrip and Queued
// are normally zero (the root's own overhead is then MinOverhead). A
// successful batch updates the root's estimates; a
// negative duration is a protocol error that changes nothing.
func (s *Scheduler) CompleteRootTimed(slot int, ok bool, t Timing) error {
	return s.completeRoot(slot, ok, &t)
}

// completeRoot is CompleteRoot (t nil) and CompleteRootTimed.
func (s *Scheduler) completeRoot(slot int, ok bool, t *Timing) error {
	const op = "CompleteRoot"
	root := s.cfg.Root
	if err := s.checkSlot(op, root, slot); err != nil {
		return err
	}
	l := &s.slots[root][slot]
	if l.state != Running {
		return slotErr(op, root, slot, "slot is %v, want Running", l.state)
	}
	if t != nil && !t.valid() {
		return slotErr(op, root, slot, "batch %d: negative duration in %+v", l.batch.ID, *t)
	}
	s.complete(root, l, ok, t)
	return nil
}

// complete records the end of l's batch on rank; t is its measurement,
// nil when there is none.
func (s *Scheduler) complete(rank int, l *slot, ok bool, t *Timing) {
	b := l.batch
	if ok && t != nil {
		p := &s.pol[rank]
		p.observe(b.Count, *t)
		if rank != s.cfg.Root {
			p.updatePrefetch(s.curSize(rank))
		}
	}
	if ok && s.done == nil {
		s.completed += b.Count // an open input's batches are disjoint
	} else if ok {
		for i := b.Start; i < b.End(); i++ {
			if !s.done[i] {
				s.done[i] = true
				s.completed++
			}
		}
	} else {
		s.failed = true
	}
	l.state = Idle
	if rank != s.cfg.Root {
		s.running--
	}
	s.stats.Results++
}

// FailRunning marks the running batch of (rank, slot) failed without
// trusting any received batch id (a RESULT whose header was corrupt): the
// pinned batch is returned, the slot goes back to Idle, and a failure is
// recorded so the slot's next READY gets STOP.
func (s *Scheduler) FailRunning(rank, slot int) (Batch, error) {
	const op = "FailRunning"
	if err := s.checkSlot(op, rank, slot); err != nil {
		return Batch{}, err
	}
	l := &s.slots[rank][slot]
	if l.state != Running {
		return Batch{}, slotErr(op, rank, slot, "slot is %v, want Running", l.state)
	}
	b := l.batch
	s.complete(rank, l, false, nil)
	return b, nil
}

// OnDrain handles rank's DRAIN (for the root: its own drain). It is
// allowed only once, when every slot of rank is StopReceived; then every
// slot and the rank become Drained.
func (s *Scheduler) OnDrain(rank int) error {
	const op = "OnDrain"
	if err := s.checkRank(op, rank); err != nil {
		return err
	}
	if s.drainedR[rank] {
		return protoErr(op, rank, "rank already drained")
	}
	for j, l := range s.slots[rank] {
		if l.state != StopReceived {
			return slotErr(op, rank, j, "slot is %v, want StopReceived", l.state)
		}
	}
	for j := range s.slots[rank] {
		s.slots[rank][j].state = Drained
	}
	s.drainedR[rank] = true
	s.drained++
	s.stats.Drains[rank]++
	return nil
}

// Check verifies the instrumentation invariants: per-slot batch and item
// counts that add up to what was assigned and agree with the per-slot size
// histograms, the count of Running remote slots (RemoteBusy), and, once
// done, one completion per assigned batch, exactly one STOP per slot and one DRAIN per rank. It also checks that a
// finished call without failure completed every index.
func (s *Scheduler) Check() error {
	st := &s.stats
	var batches, items int64
	for r := range st.Batches {
		for j := range st.Batches[r] {
			batches += st.Batches[r][j]
			items += st.Items[r][j]
		}
	}
	if batches != st.Assigned || items != int64(s.next) {
		return protoErr("Check", -1, "per-slot tables count %d batches and %d items, want %d and %d", batches, items, st.Assigned, s.next)
	}
	for r, hs := range s.hist {
		for j, h := range hs {
			if b, n := h.totals(); b != st.Batches[r][j] || n != st.Items[r][j] {
				return slotErr("Check", r, j, "size histogram counts %d batches of %d items, want %d and %d", b, n, st.Batches[r][j], st.Items[r][j])
			}
		}
	}
	running := 0
	for r, ls := range s.slots {
		for _, l := range ls {
			if r != s.cfg.Root && l.state == Running {
				running++
			}
		}
	}
	if running != s.running {
		return protoErr("Check", -1, "%d remote slots Running, counted %d", running, s.running)
	}
	if !s.Done() {
		return nil
	}
	if st.Results != st.Assigned {
		return protoErr("Check", -1, "%d results for %d assigned batches", st.Results, st.Assigned)
	}
	for r := range s.slots {
		if st.Drains[r] != 1 {
			return protoErr("Check", r, "%d DRAIN, want one", st.Drains[r])
		}
		for j, n := range st.Stops[r] {
			if n != 1 {
				return slotErr("Check", r, j, "%d STOP, want one", n)
			}
		}
	}
	if !s.failed && (!s.closed || s.completed != s.cfg.Items) {
		return protoErr("Check", -1, "done with %d of %d items complete (input closed: %v)", s.completed, s.cfg.Items, s.closed)
	}
	return nil
}

func (s *Scheduler) valid(rank, slot int) bool {
	return rank >= 0 && rank < len(s.slots) && slot >= 0 && slot < len(s.slots[rank])
}

func (s *Scheduler) checkRank(op string, rank int) error {
	if rank < 0 || rank >= len(s.slots) {
		return protoErr(op, rank, "rank outside [0,%d)", len(s.slots))
	}
	return nil
}

func (s *Scheduler) checkSlot(op string, rank, slot int) error {
	if err := s.checkRank(op, rank); err != nil {
		return err
	}
	if slot < 0 || slot >= len(s.slots[rank]) {
		return slotErr(op, rank, slot, "slot outside [0,%d)", len(s.slots[rank]))
	}
	if s.drainedR[rank] {
		return slotErr(op, rank, slot, "rank already drained")
	}
	return nil
}
