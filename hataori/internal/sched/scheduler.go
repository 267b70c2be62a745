package sched

import (
	"fmt"
	"math"
)

// Config describes one Pmap call as the root sees it.
type Config struct {
	// Items is the number of input items (N >= 0).
	Items int
	// BatchSize is the fixed batch size (>= 1).
	BatchSize int
	// Ranks is the world size of the private communicator (>= 1).
	Ranks int
	// Root is the rank that owns the queue, in [0, Ranks).
	Root int
}

// Stats is the scheduler's instrumentation.
type Stats struct {
	// Assigned counts batches handed out (root lane included).
	Assigned int64
	// Results counts completions processed (RESULT or root completion).
	Results int64
	// MaxRunning is the largest number of batches a single lane ever held
	// at once; capacity one means it never exceeds 1.
	MaxRunning int
	// Prefetched is the largest number of batches a lane ever held beyond
	// the running one; it stays 0 without prefetch.
	Prefetched int
	// Stops and Drains count STOP decisions and DRAIN transitions per rank.
	Stops, Drains []int
}

type lane struct {
	state   State
	batch   Batch // pinned metadata of the running batch
	running int   // batches currently held (0 or 1)
}

// Scheduler is the root's state machine. It is not safe for concurrent
// use; the coordinator goroutine owns it.
type Scheduler struct {
	cfg       Config
	next      int   // first index not yet assigned
	nextID    int64 // id of the next batch
	lanes     []lane
	done      []bool // done[i]: index i completed successfully
	completed int
	failed    bool
	drained   int
	stats     Stats
}

// New validates cfg and returns a scheduler with every lane Idle.
func New(cfg Config) (*Scheduler, error) {
	switch {
	case cfg.Items < 0:
		return nil, &Error{Op: "New", Rank: -1, Msg: fmt.Sprintf("negative item count %d", cfg.Items), Err: ErrConfig}
	case cfg.BatchSize < 1:
		return nil, &Error{Op: "New", Rank: -1, Msg: fmt.Sprintf("batch size %d < 1", cfg.BatchSize), Err: ErrConfig}
	case cfg.Ranks < 1:
		return nil, &Error{Op: "New", Rank: -1, Msg: fmt.Sprintf("world size %d < 1", cfg.Ranks), Err: ErrConfig}
	case cfg.Root < 0 || cfg.Root >= cfg.Ranks:
		return nil, &Error{Op: "New", Rank: -1, Msg: fmt.Sprintf("root %d outside [0,%d)", cfg.Root, cfg.Ranks), Err: ErrConfig}
	}
	return &Scheduler{
		cfg:   cfg,
		lanes: make([]lane, cfg.Ranks),
		done:  make([]bool, cfg.Items),
		stats: Stats{Stops: make([]int, cfg.Ranks), Drains: make([]int, cfg.Ranks)},
	}, nil
}

// Config returns the configuration the scheduler was built with.
func (s *Scheduler) Config() Config { return s.cfg }

// State returns the state of rank's lane (Drained for an invalid rank).
func (s *Scheduler) State(rank int) State {
	if rank < 0 || rank >= len(s.lanes) {
		return Drained
	}
	return s.lanes[rank].state
}

// RunningBatch returns the batch pinned on rank's lane, if it is Running.
func (s *Scheduler) RunningBatch(rank int) (Batch, bool) {
	if rank < 0 || rank >= len(s.lanes) || s.lanes[rank].state != Running {
		return Batch{}, false
	}
	return s.lanes[rank].batch, true
}

// Failed reports whether a recoverable error has been recorded.
func (s *Scheduler) Failed() bool { return s.failed }

// Fail records a recoverable call-level error: from now on nothing is
// assigned and every READY gets STOP.
func (s *Scheduler) Fail() { s.failed = true }

// Done reports whether every lane, the root's included, is Drained.
func (s *Scheduler) Done() bool { return s.drained == len(s.lanes) }

// Completed returns how many indices completed successfully.
func (s *Scheduler) Completed() int { return s.completed }

// IsDone reports whether index i completed successfully.
func (s *Scheduler) IsDone(i int) bool { return i >= 0 && i < len(s.done) && s.done[i] }

// Remaining returns how many indices are not yet assigned.
func (s *Scheduler) Remaining() int { return s.cfg.Items - s.next }

// Stats returns a copy of the instrumentation counters.
func (s *Scheduler) Stats() Stats {
	st := s.stats
	st.Stops = append([]int(nil), s.stats.Stops...)
	st.Drains = append([]int(nil), s.stats.Drains...)
	return st
}

// OnReady handles a READY from remote rank: its lane must be Idle. It
// returns Assign with a new batch (lane Running) or Stop (lane
// StopReceived).
func (s *Scheduler) OnReady(rank int) (Decision, Batch, error) {
	if err := s.checkRank("OnReady", rank); err != nil {
		return 0, Batch{}, err
	}
	if rank == s.cfg.Root {
		return 0, Batch{}, protoErr("OnReady", rank, "the root sends no READY")
	}
	return s.dispatch("OnReady", rank)
}

// RootDispatch offers the root's own idle lane a batch, as a READY would.
// It is a protocol error while the root lane is not Idle; an idle root
// with no assignable work (or after a failure) becomes StopReceived.
func (s *Scheduler) RootDispatch() (Decision, Batch, error) {
	return s.dispatch("RootDispatch", s.cfg.Root)
}

func (s *Scheduler) dispatch(op string, rank int) (Decision, Batch, error) {
	l := &s.lanes[rank]
	if l.state != Idle {
		return 0, Batch{}, protoErr(op, rank, "lane is %v, want Idle", l.state)
	}
	if s.failed || s.next >= s.cfg.Items {
		l.state = StopReceived // via ReadySent
		s.stats.Stops[rank]++
		return Stop, Batch{}, nil
	}
	if s.nextID == math.MaxInt64 {
		return 0, Batch{}, &Error{Op: op, Rank: rank, Msg: "batch id space exhausted", Err: ErrOverflow}
	}
	n := min(s.cfg.BatchSize, s.cfg.Items-s.next)
	b := Batch{ID: s.nextID, Start: s.next, Count: n}
	s.nextID++
	s.next += n
	l.state = Running // via ReadySent
	l.batch = b
	l.running++
	s.stats.Assigned++
	s.stats.MaxRunning = max(s.stats.MaxRunning, l.running)
	return Assign, b, nil
}

// OnResult handles the RESULT of rank's running batch. The lane state,
// batch id, count and exact index sequence are all checked before
// anything changes; on any mismatch it returns a protocol error and the
// tables are untouched. ok=false (a callback error in the batch) records a
// recoverable failure. On success the indices are marked complete.
func (s *Scheduler) OnResult(rank int, id int64, indices []int64, ok bool) error {
	if err := s.ValidateResult(rank, id, indices); err != nil {
		return err
	}
	s.complete(&s.lanes[rank], ok)
	return nil
}

// ValidateResult performs OnResult's checks without changing anything, so
// a caller can validate a RESULT before decoding its payload.
func (s *Scheduler) ValidateResult(rank int, id int64, indices []int64) error {
	if err := s.checkRank("OnResult", rank); err != nil {
		return err
	}
	l := &s.lanes[rank]
	if l.state != Running {
		return protoErr("OnResult", rank, "lane is %v, want Running", l.state)
	}
	b := l.batch
	if id != b.ID {
		return protoErr("OnResult", rank, "batch id %d, want %d", id, b.ID)
	}
	if len(indices) != b.Count {
		return protoErr("OnResult", rank, "batch %d: %d indices, want %d", id, len(indices), b.Count)
	}
	for k, ix := range indices {
		if ix != int64(b.Start+k) {
			return protoErr("OnResult", rank, "batch %d: index %d at position %d, want %d", id, ix, k, b.Start+k)
		}
	}
	return nil
}

// CompleteRoot records the completion of the root's own running batch
// (handed off directly, so there are no indices to check).
func (s *Scheduler) CompleteRoot(ok bool) error {
	l := &s.lanes[s.cfg.Root]
	if l.state != Running {
		return protoErr("CompleteRoot", s.cfg.Root, "lane is %v, want Running", l.state)
	}
	s.complete(l, ok)
	return nil
}

func (s *Scheduler) complete(l *lane, ok bool) {
	b := l.batch
	if ok {
		for i := b.Start; i < b.End(); i++ {
			if !s.done[i] {
				s.done[i] = true
				s.completed++
			}
		}
	} else {
		s.failed = true
	}
	l.state = Idle // via ResultSent
	l.running--
	s.stats.Results++
}

// FailRunning marks rank's running batch failed without trusting any
// received batch id (a RESULT whose header was corrupt): the pinned batch
// is returned, the lane goes back to Idle, and a failure is recorded so
// the lane's next READY gets STOP.
func (s *Scheduler) FailRunning(rank int) (Batch, error) {
	if err := s.checkRank("FailRunning", rank); err != nil {
		return Batch{}, err
	}
	l := &s.lanes[rank]
	if l.state != Running {
		return Batch{}, protoErr("FailRunning", rank, "lane is %v, want Running", l.state)
	}
	b := l.batch
	s.complete(l, false)
	return b, nil
}

// OnDrain handles rank's DRAIN (for the root: its own drain after STOP).
func (s *Scheduler) OnDrain(rank int) error {
	if err := s.checkRank("OnDrain", rank); err != nil {
		return err
	}
	l := &s.lanes[rank]
	if l.state != StopReceived {
		return protoErr("OnDrain", rank, "lane is %v, want StopReceived", l.state)
	}
	l.state = Drained
	s.drained++
	s.stats.Drains[rank]++
	return nil
}

// Check verifies the instrumentation invariants: capacity one, nothing
// prefetched, one completion per assigned batch once done, and exactly one
// STOP and one DRAIN per lane once done. It also checks that a finished
// call without failure completed every index.
func (s *Scheduler) Check() error {
	st := &s.stats
	if st.MaxRunning > 1 {
		return protoErr("Check", -1, "a lane held %d running batches", st.MaxRunning)
	}
	if st.Prefetched != 0 {
		return protoErr("Check", -1, "prefetched = %d", st.Prefetched)
	}
	if !s.Done() {
		return nil
	}
	if st.Results != st.Assigned {
		return protoErr("Check", -1, "%d results for %d assigned batches", st.Results, st.Assigned)
	}
	for r := range s.lanes {
		if st.Stops[r] != 1 || st.Drains[r] != 1 {
			return protoErr("Check", r, "%d STOP and %d DRAIN, want one each", st.Stops[r], st.Drains[r])
		}
	}
	if !s.failed && s.completed != s.cfg.Items {
		return protoErr("Check", -1, "done with %d of %d items complete", s.completed, s.cfg.Items)
	}
	return nil
}

func (s *Scheduler) checkRank(op string, rank int) error {
	if rank < 0 || rank >= len(s.lanes) {
		return protoErr(op, rank, "rank outside [0,%d)", len(s.lanes))
	}
	return nil
}
