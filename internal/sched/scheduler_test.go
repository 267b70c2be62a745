package sched

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func mustNew(t *testing.T, cfg Config) *Scheduler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return s
}

// schedSnap is a deep copy of every table of a Scheduler.
type schedSnap struct {
	cfg       Config
	next      int
	nextID    int64
	slots     [][]slot
	drainedR  []bool
	done      []bool
	completed int
	failed    bool
	drained   int
	stats     Stats
	pol       []rankPolicy
	hist      [][]SizeHist
}

func snapshot(s *Scheduler) schedSnap {
	sn := schedSnap{
		cfg: s.Config(), next: s.next, nextID: s.nextID,
		drainedR: append([]bool(nil), s.drainedR...), done: append([]bool(nil), s.done...),
		completed: s.completed, failed: s.failed, drained: s.drained, stats: s.Stats(),
		pol: append([]rankPolicy(nil), s.pol...),
	}
	for _, row := range s.hist {
		var hs []SizeHist
		for _, h := range row {
			hs = append(hs, append(SizeHist(nil), h...))
		}
		sn.hist = append(sn.hist, hs)
	}
	for _, row := range s.slots {
		sn.slots = append(sn.slots, append([]slot(nil), row...))
	}
	return sn
}

// wantUnchanged asserts that err wraps ErrProtocol, is an *Error with op,
// and that the scheduler still equals before.
func wantUnchanged(t *testing.T, name string, s *Scheduler, before schedSnap, op string, err error) {
	t.Helper()
	if !errors.Is(err, ErrProtocol) {
		t.Errorf("%s = %v, want ErrProtocol", name, err)
		return
	}
	var se *Error
	if !errors.As(err, &se) || se.Op != op {
		t.Errorf("%s: error %#v, want *Error with Op %q", name, err, op)
	}
	if after := snapshot(s); !reflect.DeepEqual(before, after) {
		t.Errorf("%s changed the scheduler:\nbefore %+v\nafter  %+v", name, before, after)
	}
}

// decision is the result triple of OnReady or RootDispatch.
type decision struct {
	d   Decision
	b   Batch
	err error
}

func dec(d Decision, b Batch, err error) decision { return decision{d, b, err} }

func err3(_ Decision, _ Batch, err error) error { return err }

func mustAssign(t *testing.T, what string, r decision, want Batch) {
	t.Helper()
	if r.err != nil || r.d != Assign || r.b != want {
		t.Fatalf("%s = %v %+v %v, want Assign %+v", what, r.d, r.b, r.err, want)
	}
}

func mustStop(t *testing.T, what string, r decision) {
	t.Helper()
	if r.err != nil || r.d != Stop {
		t.Fatalf("%s = %v %v, want Stop", what, r.d, r.err)
	}
}

func mustOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Items: -1, BatchSize: 1, Slots: []int{1}},
		{Items: 1, BatchSize: -1, Slots: []int{1}},
		{Items: 1, BatchSize: 1},
		{Items: 1, BatchSize: 1, Slots: []int{}},
		{Items: 1, BatchSize: 1, Slots: []int{1, 1}, Root: 2},
		{Items: 1, BatchSize: 1, Slots: []int{1, 1}, Root: -1},
		{Items: 1, BatchSize: 1, Slots: []int{0}},
		{Items: 1, BatchSize: 1, Slots: []int{2, 3, -1}},
		{Items: 1, BatchSize: 1, Slots: []int{2, 0, 4}, Root: 2},
	} {
		s, err := New(cfg)
		if !errors.Is(err, ErrConfig) || s != nil {
			t.Errorf("New(%+v) = %v, %v, want ErrConfig", cfg, s, err)
		}
		var se *Error
		if !errors.As(err, &se) || se.Op != "New" {
			t.Errorf("New(%+v): error %#v", cfg, err)
		}
	}
}

func TestConfigAndAccessors(t *testing.T) {
	slots := []int{2, 1, 3}
	s := mustNew(t, Config{Items: 5, BatchSize: 2, Root: 2, Slots: slots})
	slots[0] = 9 // New copied the slice
	c := s.Config()
	if !reflect.DeepEqual(c, Config{Items: 5, BatchSize: 2, Root: 2, Slots: []int{2, 1, 3}}) {
		t.Fatalf("Config = %+v", c)
	}
	c.Slots[1] = 7 // Config returns a copy
	if s.SlotCount(1) != 1 || s.Config().Slots[1] != 1 {
		t.Fatal("Config shares its Slots slice")
	}
	if s.Ranks() != 3 {
		t.Fatalf("Ranks = %d", s.Ranks())
	}
	for r, want := range []int{2, 1, 3} {
		if s.SlotCount(r) != want {
			t.Errorf("SlotCount(%d) = %d, want %d", r, s.SlotCount(r), want)
		}
		for j := range want {
			if s.State(r, j) != Idle {
				t.Errorf("State(%d,%d) = %v", r, j, s.State(r, j))
			}
		}
		if s.RankDrained(r) {
			t.Errorf("RankDrained(%d)", r)
		}
	}
	for _, rs := range [][2]int{{-1, 0}, {3, 0}, {0, 2}, {1, 1}, {0, -1}} {
		if st := s.State(rs[0], rs[1]); st != Drained {
			t.Errorf("State(%d,%d) = %v, want Drained", rs[0], rs[1], st)
		}
		if _, ok := s.RunningBatch(rs[0], rs[1]); ok {
			t.Errorf("RunningBatch(%d,%d) ok", rs[0], rs[1])
		}
	}
	if s.SlotCount(-1) != 0 || s.SlotCount(3) != 0 || s.RankDrained(-1) || s.RankDrained(3) {
		t.Fatal("invalid rank accessors")
	}
	if s.Remaining() != 5 || s.Completed() != 0 || s.Failed() || s.Done() || s.IsDone(0) || s.IsDone(-1) || s.IsDone(5) {
		t.Fatal("fresh scheduler accessors")
	}
	st := s.Stats()
	if !reflect.DeepEqual(st.Stops, [][]int{{0, 0}, {0}, {0, 0, 0}}) ||
		!reflect.DeepEqual(st.Batches, [][]int64{{0, 0}, {0}, {0, 0, 0}}) ||
		!reflect.DeepEqual(st.Items, [][]int64{{0, 0}, {0}, {0, 0, 0}}) ||
		!reflect.DeepEqual(st.Drains, []int{0, 0, 0}) {
		t.Fatalf("fresh stats %+v", st)
	}
}

// Several slots per rank, remote and root, interleaved; completions out
// of order.
func TestNormalFlowSeveralSlots(t *testing.T) {
	s := mustNew(t, Config{Items: 11, BatchSize: 2, Root: 1, Slots: []int{2, 3, 1}})
	mustAssign(t, "OnReady(0,1)", dec(s.OnReady(0, 1)), Batch{0, 0, 2})
	mustAssign(t, "RootDispatch(2)", dec(s.RootDispatch(2)), Batch{1, 2, 2})
	mustAssign(t, "OnReady(0,0)", dec(s.OnReady(0, 0)), Batch{2, 4, 2})
	mustAssign(t, "OnReady(2,0)", dec(s.OnReady(2, 0)), Batch{3, 6, 2})
	mustAssign(t, "RootDispatch(0)", dec(s.RootDispatch(0)), Batch{4, 8, 2})

	// Every slot holds its own pinned batch.
	for _, c := range []struct {
		rank, slot int
		b          Batch
	}{{0, 1, Batch{0, 0, 2}}, {1, 2, Batch{1, 2, 2}}, {0, 0, Batch{2, 4, 2}}, {2, 0, Batch{3, 6, 2}}, {1, 0, Batch{4, 8, 2}}} {
		if got, ok := s.RunningBatch(c.rank, c.slot); !ok || got != c.b || s.State(c.rank, c.slot) != Running {
			t.Fatalf("RunningBatch(%d,%d) = %+v %v, want %+v", c.rank, c.slot, got, ok, c.b)
		}
	}
	if s.State(1, 1) != Idle || s.Remaining() != 1 {
		t.Fatalf("state %v remaining %d", s.State(1, 1), s.Remaining())
	}

	mustOK(t, "OnResult(0,0)", s.OnResult(0, 0, 2, []int64{4, 5}, true))
	mustOK(t, "CompleteRoot(0)", s.CompleteRoot(0, true))
	mustAssign(t, "RootDispatch(1)", dec(s.RootDispatch(1)), Batch{5, 10, 1})
	mustOK(t, "OnResult(2,0)", s.OnResult(2, 0, 3, []int64{6, 7}, true))
	mustOK(t, "OnResult(0,1)", s.OnResult(0, 1, 0, []int64{0, 1}, true))
	mustOK(t, "CompleteRoot(2)", s.CompleteRoot(2, true))
	if s.Completed() != 10 || s.IsDone(10) || !s.IsDone(9) {
		t.Fatalf("completed %d", s.Completed())
	}

	// Stops arrive slot by slot; drains rank by rank.
	mustStop(t, "OnReady(0,0)", dec(s.OnReady(0, 0)))
	mustStop(t, "RootDispatch(0)", dec(s.RootDispatch(0)))
	if err := s.OnDrain(0); !errors.Is(err, ErrProtocol) {
		t.Fatalf("OnDrain(0) with slot 1 idle = %v", err)
	}
	mustStop(t, "OnReady(0,1)", dec(s.OnReady(0, 1)))
	mustOK(t, "OnDrain(0)", s.OnDrain(0))
	if !s.RankDrained(0) || s.State(0, 0) != Drained || s.State(0, 1) != Drained {
		t.Fatal("rank 0 not drained")
	}
	mustStop(t, "OnReady(2,0)", dec(s.OnReady(2, 0)))
	mustOK(t, "OnDrain(2)", s.OnDrain(2))
	mustStop(t, "RootDispatch(2)", dec(s.RootDispatch(2)))
	if s.Done() {
		t.Fatal("done with a root slot running")
	}
	if err := s.Check(); err != nil {
		t.Fatalf("Check mid-call: %v", err)
	}
	mustOK(t, "CompleteRoot(1)", s.CompleteRoot(1, true))
	mustStop(t, "RootDispatch(1)", dec(s.RootDispatch(1)))
	mustOK(t, "OnDrain(1)", s.OnDrain(1))

	if !s.Done() || s.Completed() != 11 || s.Failed() || s.Remaining() != 0 {
		t.Fatalf("done %v completed %d failed %v", s.Done(), s.Completed(), s.Failed())
	}
	mustOK(t, "Check", s.Check())
	want := Stats{
		Assigned: 6, Results: 6,
		Stops:     [][]int{{1, 1}, {1, 1, 1}, {1}},
		Drains:    []int{1, 1, 1},
		Batches:   [][]int64{{1, 1}, {1, 1, 1}, {1}},
		Items:     [][]int64{{2, 2}, {2, 1, 2}, {2}},
		Sizes:     [][]Sizes{{{1, 2, 2, 2}, {1, 2, 2, 2}}, {{1, 2, 2, 2}, {1, 1, 1, 1}, {1, 2, 2, 2}}, {{1, 2, 2, 2}}},
		RankSizes: []Sizes{{2, 2, 2, 2}, {3, 1, 2, 2}, {1, 2, 2, 2}},
	}
	for range 3 {
		want.Estimates = append(want.Estimates, Estimate{Overhead: MinOverhead, Size: 2})
	}
	if st := s.Stats(); !reflect.DeepEqual(st, want) {
		t.Fatalf("stats\n got %+v\nwant %+v", st, want)
	}
}

func TestWorldSizeOneRunsEverythingOnRootSlots(t *testing.T) {
	s := mustNew(t, Config{Items: 9, BatchSize: 2, Slots: []int{3}})
	var ids []int64
	running := map[int]bool{}
	for slot := 0; !s.Done(); slot = (slot + 1) % 3 {
		switch s.State(0, slot) {
		case Idle:
			d, b, err := s.RootDispatch(slot)
			if err != nil {
				t.Fatal(err)
			}
			if d == Assign {
				ids = append(ids, b.ID)
				running[slot] = true
			}
		case Running:
			mustOK(t, "CompleteRoot", s.CompleteRoot(slot, true))
		case StopReceived:
			stopped := true
			for j := range 3 {
				stopped = stopped && s.State(0, j) == StopReceived
			}
			if stopped {
				mustOK(t, "OnDrain", s.OnDrain(0))
			}
		}
	}
	if !reflect.DeepEqual(ids, []int64{0, 1, 2, 3, 4}) || len(running) != 3 {
		t.Fatalf("ids %v, slots used %v", ids, running)
	}
	if s.Completed() != 9 {
		t.Fatalf("completed %d", s.Completed())
	}
	mustOK(t, "Check", s.Check())
	if st := s.Stats(); st.Assigned != 5 || st.Results != 5 || !reflect.DeepEqual(st.Stops, [][]int{{1, 1, 1}}) {
		t.Fatalf("stats %+v", st)
	}
}

func TestEmptyInputStopsEverySlot(t *testing.T) {
	s := mustNew(t, Config{Items: 0, BatchSize: 1, Root: 2, Slots: []int{2, 1, 2}})
	for _, rs := range [][2]int{{0, 0}, {0, 1}, {1, 0}} {
		mustStop(t, "OnReady", dec(s.OnReady(rs[0], rs[1])))
	}
	for j := range 2 {
		mustStop(t, "RootDispatch", dec(s.RootDispatch(j)))
	}
	for r := range 3 {
		mustOK(t, "OnDrain", s.OnDrain(r))
	}
	if !s.Done() || s.Stats().Assigned != 0 {
		t.Fatal("not done")
	}
	mustOK(t, "Check", s.Check())
}

func TestBatchIDsIncreaseByOneInInputOrder(t *testing.T) {
	s := mustNew(t, Config{Items: 23, BatchSize: 3, Root: 0, Slots: []int{2, 4, 1}})
	next := Batch{}
	// Dispatch round-robin over every slot (in a mixed order), completing a
	// slot's running batch just before it asks again.
	order := [][2]int{{1, 3}, {0, 1}, {2, 0}, {1, 0}, {0, 0}, {1, 2}, {1, 1}}
	for n := 0; s.Remaining() > 0; n++ {
		r, j := order[n%len(order)][0], order[n%len(order)][1]
		if s.State(r, j) == Running {
			b, _ := s.RunningBatch(r, j)
			if r == 0 {
				mustOK(t, "CompleteRoot", s.CompleteRoot(j, true))
			} else {
				mustOK(t, "OnResult", s.OnResult(r, j, b.ID, b.Indices(), true))
			}
		}
		var got decision
		if r == 0 {
			got = dec(s.RootDispatch(j))
		} else {
			got = dec(s.OnReady(r, j))
		}
		want := Batch{ID: next.ID + 1, Start: next.End(), Count: min(3, 23-next.End())}
		if n == 0 {
			want = Batch{ID: 0, Start: 0, Count: 3}
		}
		mustAssign(t, "dispatch", got, want)
		next = got.b
	}
	if next.ID != 7 || next.End() != 23 {
		t.Fatalf("last batch %+v", next)
	}
}

// Every disallowed transition returns a protocol error and changes nothing.
func TestDisallowedTransitionsChangeNothing(t *testing.T) {
	// Every index is assigned, nothing failed. Rank 1 is the root: slot 0
	// Running, 1 StopReceived, 2 Idle. Rank 0: slot 0 Running, slot 1
	// StopReceived. Rank 2 drained. Rank 3: slot 0 Idle.
	setup := func(t *testing.T) *Scheduler {
		s := mustNew(t, Config{Items: 6, BatchSize: 2, Root: 1, Slots: []int{2, 3, 1, 1}})
		mustAssign(t, "RootDispatch(0)", dec(s.RootDispatch(0)), Batch{0, 0, 2})
		mustAssign(t, "OnReady(0,0)", dec(s.OnReady(0, 0)), Batch{1, 2, 2})
		mustAssign(t, "OnReady(2,0)", dec(s.OnReady(2, 0)), Batch{2, 4, 2})
		mustOK(t, "OnResult(2,0)", s.OnResult(2, 0, 2, []int64{4, 5}, true))
		mustStop(t, "OnReady(2,0)", dec(s.OnReady(2, 0)))
		mustOK(t, "OnDrain(2)", s.OnDrain(2))
		mustStop(t, "OnReady(0,1)", dec(s.OnReady(0, 1)))
		mustStop(t, "RootDispatch(1)", dec(s.RootDispatch(1)))
		return s
	}
	cases := []struct {
		name, op string
		f        func(s *Scheduler) error
	}{
		{"READY from the root", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(1, 2)) }},
		{"READY from rank -1", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(-1, 0)) }},
		{"READY from rank 4", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(4, 0)) }},
		{"READY from slot -1", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(3, -1)) }},
		{"READY from slot 1 of a one-slot rank", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(3, 1)) }},
		{"READY while Running", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(0, 0)) }},
		{"READY after STOP", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(0, 1)) }},
		{"READY after DRAIN", "OnReady", func(s *Scheduler) error { return err3(s.OnReady(2, 0)) }},
		{"root dispatch while Running", "RootDispatch", func(s *Scheduler) error { return err3(s.RootDispatch(0)) }},
		{"root dispatch after STOP", "RootDispatch", func(s *Scheduler) error { return err3(s.RootDispatch(1)) }},
		{"root dispatch slot 3", "RootDispatch", func(s *Scheduler) error { return err3(s.RootDispatch(3)) }},
		{"root dispatch slot -1", "RootDispatch", func(s *Scheduler) error { return err3(s.RootDispatch(-1)) }},
		{"RESULT from an idle slot", "OnResult", func(s *Scheduler) error { return s.OnResult(3, 0, 1, []int64{2, 3}, true) }},
		{"RESULT from a stopped slot", "OnResult", func(s *Scheduler) error { return s.OnResult(0, 1, 1, []int64{2, 3}, true) }},
		{"RESULT from a drained rank", "OnResult", func(s *Scheduler) error { return s.OnResult(2, 0, 2, []int64{4, 5}, true) }},
		{"RESULT from the root", "OnResult", func(s *Scheduler) error { return s.OnResult(1, 0, 0, []int64{0, 1}, true) }},
		{"RESULT from slot 2", "OnResult", func(s *Scheduler) error { return s.OnResult(0, 2, 1, []int64{2, 3}, true) }},
		{"RESULT from rank 7", "OnResult", func(s *Scheduler) error { return s.OnResult(7, 0, 1, []int64{2, 3}, true) }},
		{"failed RESULT from an idle slot", "OnResult", func(s *Scheduler) error { return s.OnResult(3, 0, 1, []int64{2, 3}, false) }},
		{"root completion on an idle slot", "CompleteRoot", func(s *Scheduler) error { return s.CompleteRoot(2, true) }},
		{"root completion on a stopped slot", "CompleteRoot", func(s *Scheduler) error { return s.CompleteRoot(1, false) }},
		{"root completion on slot 3", "CompleteRoot", func(s *Scheduler) error { return s.CompleteRoot(3, true) }},
		{"FailRunning on an idle slot", "FailRunning", func(s *Scheduler) error { _, err := s.FailRunning(3, 0); return err }},
		{"FailRunning on a stopped slot", "FailRunning", func(s *Scheduler) error { _, err := s.FailRunning(0, 1); return err }},
		{"FailRunning on a drained rank", "FailRunning", func(s *Scheduler) error { _, err := s.FailRunning(2, 0); return err }},
		{"FailRunning on slot 5", "FailRunning", func(s *Scheduler) error { _, err := s.FailRunning(0, 5); return err }},
		{"FailRunning on rank -1", "FailRunning", func(s *Scheduler) error { _, err := s.FailRunning(-1, 0); return err }},
		{"DRAIN with a slot running", "OnDrain", func(s *Scheduler) error { return s.OnDrain(0) }},
		{"DRAIN with every slot idle", "OnDrain", func(s *Scheduler) error { return s.OnDrain(3) }},
		{"root DRAIN with slots running and idle", "OnDrain", func(s *Scheduler) error { return s.OnDrain(1) }},
		{"second DRAIN", "OnDrain", func(s *Scheduler) error { return s.OnDrain(2) }},
		{"DRAIN from rank 4", "OnDrain", func(s *Scheduler) error { return s.OnDrain(4) }},
		{"DRAIN from rank -1", "OnDrain", func(s *Scheduler) error { return s.OnDrain(-1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := setup(t)
			before := snapshot(s)
			wantUnchanged(t, c.name, s, before, c.op, c.f(s))
		})
	}
	// The setup is still driveable to the end after all that.
	s := setup(t)
	mustOK(t, "CompleteRoot(0)", s.CompleteRoot(0, true))
	mustOK(t, "OnResult(0,0)", s.OnResult(0, 0, 1, []int64{2, 3}, true))
	mustStop(t, "OnReady(0,0)", dec(s.OnReady(0, 0)))
	mustStop(t, "OnReady(3,0)", dec(s.OnReady(3, 0)))
	mustStop(t, "RootDispatch(0)", dec(s.RootDispatch(0)))
	mustStop(t, "RootDispatch(2)", dec(s.RootDispatch(2)))
	for _, r := range []int{0, 1, 3} {
		mustOK(t, "OnDrain", s.OnDrain(r))
	}
	if !s.Done() || s.Completed() != 6 {
		t.Fatalf("done %v completed %d", s.Done(), s.Completed())
	}
	mustOK(t, "Check", s.Check())
}

func TestDrainNeedsEverySlotStopped(t *testing.T) {
	s := mustNew(t, Config{Items: 1, BatchSize: 1, Root: 0, Slots: []int{1, 3}})
	mustAssign(t, "OnReady(1,2)", dec(s.OnReady(1, 2)), Batch{0, 0, 1})
	mustStop(t, "OnReady(1,0)", dec(s.OnReady(1, 0)))
	before := snapshot(s)
	wantUnchanged(t, "DRAIN with slot 1 idle and 2 running", s, before, "OnDrain", s.OnDrain(1))
	mustStop(t, "OnReady(1,1)", dec(s.OnReady(1, 1)))
	before = snapshot(s)
	wantUnchanged(t, "DRAIN with slot 2 running", s, before, "OnDrain", s.OnDrain(1))
	mustOK(t, "OnResult", s.OnResult(1, 2, 0, []int64{0}, true))
	before = snapshot(s)
	wantUnchanged(t, "DRAIN with slot 2 idle", s, before, "OnDrain", s.OnDrain(1))
	mustStop(t, "OnReady(1,2)", dec(s.OnReady(1, 2)))
	if s.RankDrained(1) {
		t.Fatal("drained before DRAIN")
	}
	mustOK(t, "OnDrain(1)", s.OnDrain(1))
	if !s.RankDrained(1) || s.Done() {
		t.Fatalf("rank drained %v done %v", s.RankDrained(1), s.Done())
	}
	for j := range 3 {
		if s.State(1, j) != Drained {
			t.Fatalf("slot %d is %v", j, s.State(1, j))
		}
	}
	before = snapshot(s)
	err := s.OnDrain(1)
	wantUnchanged(t, "second DRAIN", s, before, "OnDrain", err)
	if !strings.Contains(err.Error(), "already drained") {
		t.Fatalf("second DRAIN: %v", err)
	}
	err = err3(s.OnReady(1, 0))
	wantUnchanged(t, "READY after DRAIN", s, before, "OnReady", err)
	if !strings.Contains(err.Error(), "already drained") {
		t.Fatalf("READY after DRAIN: %v", err)
	}
	mustStop(t, "RootDispatch", dec(s.RootDispatch(0)))
	mustOK(t, "OnDrain(0)", s.OnDrain(0))
	before = snapshot(s)
	wantUnchanged(t, "second root DRAIN", s, before, "OnDrain", s.OnDrain(0))
	wantUnchanged(t, "root dispatch after DRAIN", s, before, "RootDispatch", err3(s.RootDispatch(0)))
	if !s.Done() {
		t.Fatal("not done")
	}
	mustOK(t, "Check", s.Check())
	if st := s.Stats(); !reflect.DeepEqual(st.Drains, []int{1, 1}) || !reflect.DeepEqual(st.Stops, [][]int{{1}, {1, 1, 1}}) {
		t.Fatalf("stats %+v", st)
	}
}

// A bad RESULT must be rejected by ValidateResult and OnResult alike and
// leave every table untouched.
func TestBadResultLeavesTablesUntouched(t *testing.T) {
	// Rank 1 slots 0 and 1 run batches 1 [2,4) and 2 [4,6).
	cases := []struct {
		name       string
		rank, slot int
		id         int64
		indices    []int64
	}{
		{"wrong id", 1, 0, 7, []int64{2, 3}},
		{"other slot's id", 1, 0, 2, []int64{2, 3}},
		{"other slot's batch", 1, 0, 2, []int64{4, 5}},
		{"negative id", 1, 0, -1, []int64{2, 3}},
		{"short", 1, 0, 1, []int64{2}},
		{"empty", 1, 0, 1, nil},
		{"long", 1, 0, 1, []int64{2, 3, 4}},
		{"wrong order", 1, 0, 1, []int64{3, 2}},
		{"wrong start", 1, 0, 1, []int64{0, 1}},
		{"idle slot", 1, 2, 1, []int64{2, 3}},
		{"idle rank", 2, 0, 1, []int64{2, 3}},
		{"root's running slot", 0, 0, 0, []int64{0, 1}},
		{"rank out of range", 5, 0, 1, []int64{2, 3}},
		{"slot out of range", 1, 3, 1, []int64{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustNew(t, Config{Items: 8, BatchSize: 2, Slots: []int{1, 3, 2}})
			mustAssign(t, "RootDispatch", dec(s.RootDispatch(0)), Batch{0, 0, 2})
			mustAssign(t, "OnReady(1,0)", dec(s.OnReady(1, 0)), Batch{1, 2, 2})
			mustAssign(t, "OnReady(1,1)", dec(s.OnReady(1, 1)), Batch{2, 4, 2})
			mustOK(t, "CompleteRoot", s.CompleteRoot(0, true))
			before := snapshot(s)
			wantUnchanged(t, "ValidateResult", s, before, "OnResult", s.ValidateResult(c.rank, c.slot, c.id, c.indices))
			wantUnchanged(t, "OnResult ok", s, before, "OnResult", s.OnResult(c.rank, c.slot, c.id, c.indices, true))
			wantUnchanged(t, "OnResult failed", s, before, "OnResult", s.OnResult(c.rank, c.slot, c.id, c.indices, false))
			// The valid RESULTs are still accepted afterwards.
			mustOK(t, "ValidateResult", s.ValidateResult(1, 0, 1, []int64{2, 3}))
			if !reflect.DeepEqual(snapshot(s), before) {
				t.Fatal("a successful ValidateResult changed the tables")
			}
			mustOK(t, "OnResult(1,0)", s.OnResult(1, 0, 1, []int64{2, 3}, true))
			mustOK(t, "OnResult(1,1)", s.OnResult(1, 1, 2, []int64{4, 5}, true))
			if s.Completed() != 6 || !s.IsDone(5) || s.IsDone(6) || s.Failed() {
				t.Fatalf("completed %d", s.Completed())
			}
		})
	}
}

func TestStopAfterFailure(t *testing.T) {
	// Rank 0 is the root (2 slots), rank 1 has 2 slots, rank 2 has 1.
	failures := []struct {
		name string
		f    func(t *testing.T, s *Scheduler)
	}{
		{"failed RESULT", func(t *testing.T, s *Scheduler) { mustOK(t, "OnResult", s.OnResult(1, 1, 1, []int64{1}, false)) }},
		{"failed root batch", func(t *testing.T, s *Scheduler) { mustOK(t, "CompleteRoot", s.CompleteRoot(0, false)) }},
		{"Fail", func(t *testing.T, s *Scheduler) { s.Fail() }},
		{"FailRunning", func(t *testing.T, s *Scheduler) {
			if b, err := s.FailRunning(1, 1); err != nil || b != (Batch{1, 1, 1}) {
				t.Fatalf("FailRunning = %+v %v", b, err)
			}
		}},
	}
	for _, c := range failures {
		t.Run(c.name, func(t *testing.T) {
			s := mustNew(t, Config{Items: 10, BatchSize: 1, Slots: []int{2, 2, 1}})
			mustAssign(t, "RootDispatch(0)", dec(s.RootDispatch(0)), Batch{0, 0, 1})
			mustAssign(t, "OnReady(1,1)", dec(s.OnReady(1, 1)), Batch{1, 1, 1})
			mustAssign(t, "OnReady(2,0)", dec(s.OnReady(2, 0)), Batch{2, 2, 1})
			if s.Failed() {
				t.Fatal("failed too early")
			}
			c.f(t, s)
			if !s.Failed() {
				t.Fatal("failure not recorded")
			}
			// Work remains, yet every later READY and dispatch gets STOP.
			mustStop(t, "OnReady(1,0)", dec(s.OnReady(1, 0)))
			mustStop(t, "RootDispatch(1)", dec(s.RootDispatch(1)))
			// Batches already assigned still finish; a success is accepted.
			if s.State(1, 1) == Running {
				mustOK(t, "OnResult(1,1)", s.OnResult(1, 1, 1, []int64{1}, true))
			}
			if s.State(0, 0) == Running {
				mustOK(t, "CompleteRoot(0)", s.CompleteRoot(0, true))
			}
			mustOK(t, "OnResult(2,0)", s.OnResult(2, 0, 2, []int64{2}, true))
			if !s.IsDone(2) {
				t.Fatal("success after failure not recorded")
			}
			mustStop(t, "OnReady(1,1)", dec(s.OnReady(1, 1)))
			mustStop(t, "OnReady(2,0)", dec(s.OnReady(2, 0)))
			mustStop(t, "RootDispatch(0)", dec(s.RootDispatch(0)))
			for r := range 3 {
				mustOK(t, "OnDrain", s.OnDrain(r))
			}
			if !s.Done() || s.Remaining() != 7 {
				t.Fatalf("done %v remaining %d", s.Done(), s.Remaining())
			}
			mustOK(t, "Check", s.Check())
			if st := s.Stats(); st.Assigned != 3 || st.Results != 3 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestFailRunningUsesThePinnedBatchOfItsSlot(t *testing.T) {
	s := mustNew(t, Config{Items: 8, BatchSize: 2, Slots: []int{1, 2}})
	mustAssign(t, "RootDispatch", dec(s.RootDispatch(0)), Batch{0, 0, 2})
	mustAssign(t, "OnReady(1,1)", dec(s.OnReady(1, 1)), Batch{1, 2, 2})
	mustAssign(t, "OnReady(1,0)", dec(s.OnReady(1, 0)), Batch{2, 4, 2})
	b, err := s.FailRunning(1, 1)
	if err != nil || b != (Batch{ID: 1, Start: 2, Count: 2}) {
		t.Fatalf("FailRunning = %+v %v", b, err)
	}
	if s.State(1, 1) != Idle || !s.Failed() || s.Stats().Results != 1 || s.IsDone(2) {
		t.Fatalf("state %v failed %v", s.State(1, 1), s.Failed())
	}
	if got, ok := s.RunningBatch(1, 0); !ok || got != (Batch{2, 4, 2}) {
		t.Fatalf("other slot's batch %+v %v", got, ok)
	}
	before := snapshot(s)
	_, err = s.FailRunning(1, 1)
	wantUnchanged(t, "FailRunning on an idle slot", s, before, "FailRunning", err)
	mustStop(t, "OnReady(1,1)", dec(s.OnReady(1, 1)))
	// The other slot's RESULT is still validated against its own batch.
	before = snapshot(s)
	wantUnchanged(t, "RESULT with the failed batch", s, before, "OnResult", s.OnResult(1, 0, 1, []int64{2, 3}, true))
	mustOK(t, "OnResult(1,0)", s.OnResult(1, 0, 2, []int64{4, 5}, true))
	mustOK(t, "CompleteRoot", s.CompleteRoot(0, true))
	if s.Completed() != 4 || s.IsDone(2) || !s.IsDone(4) {
		t.Fatalf("completed %d", s.Completed())
	}
}

func TestBatchIDOverflowIsChecked(t *testing.T) {
	s := mustNew(t, Config{Items: 3, BatchSize: 1, Slots: []int{2, 1}})
	s.nextID = math.MaxInt64 - 1
	mustAssign(t, "OnReady", dec(s.OnReady(1, 0)), Batch{math.MaxInt64 - 1, 0, 1})
	before := snapshot(s)
	_, _, err := s.RootDispatch(1)
	if !errors.Is(err, ErrOverflow) {
		t.Fatalf("RootDispatch at MaxInt64 = %v, want ErrOverflow", err)
	}
	var se *Error
	if !errors.As(err, &se) || se.Op != "RootDispatch" || se.Rank != 0 {
		t.Fatalf("error %#v", err)
	}
	if !reflect.DeepEqual(before, snapshot(s)) || s.State(0, 1) != Idle || s.Remaining() != 2 {
		t.Fatal("overflow changed the scheduler")
	}
}

func TestStatsIsADeepCopy(t *testing.T) {
	s := mustNew(t, Config{Items: 2, BatchSize: 1, Slots: []int{2, 1}})
	mustAssign(t, "RootDispatch", dec(s.RootDispatch(1)), Batch{0, 0, 1})
	st := s.Stats()
	st.Stops[0][0] = 5
	st.Batches[0][1] = 5
	st.Items[0][1] = 5
	st.Drains[1] = 5
	if got := s.Stats(); got.Stops[0][0] != 0 || got.Batches[0][1] != 1 || got.Items[0][1] != 1 || got.Drains[1] != 0 {
		t.Fatalf("Stats shares its tables: %+v", got)
	}
}

func TestCheckDetectsBrokenCounts(t *testing.T) {
	s := mustNew(t, Config{Items: 2, BatchSize: 1, Slots: []int{2, 1}})
	mustAssign(t, "RootDispatch(1)", dec(s.RootDispatch(1)), Batch{0, 0, 1})
	mustAssign(t, "OnReady(1,0)", dec(s.OnReady(1, 0)), Batch{1, 1, 1})
	mustOK(t, "Check while running", s.Check())
	mustOK(t, "CompleteRoot", s.CompleteRoot(1, true))
	mustOK(t, "OnResult", s.OnResult(1, 0, 1, []int64{1}, true))
	mustStop(t, "RootDispatch(0)", dec(s.RootDispatch(0)))
	mustStop(t, "RootDispatch(1)", dec(s.RootDispatch(1)))
	mustStop(t, "OnReady(1,0)", dec(s.OnReady(1, 0)))
	mustOK(t, "OnDrain(0)", s.OnDrain(0))
	mustOK(t, "OnDrain(1)", s.OnDrain(1))
	mustOK(t, "Check", s.Check())
	tamper := []struct {
		name string
		f    func(st *Stats) func()
	}{
		{"missing result", func(st *Stats) func() { st.Results--; return func() { st.Results++ } }},
		{"duplicate DRAIN", func(st *Stats) func() { st.Drains[1] = 2; return func() { st.Drains[1] = 1 } }},
		{"missing STOP", func(st *Stats) func() { st.Stops[0][1] = 0; return func() { st.Stops[0][1] = 1 } }},
		{"duplicate STOP", func(st *Stats) func() { st.Stops[1][0] = 2; return func() { st.Stops[1][0] = 1 } }},
		{"batch count", func(st *Stats) func() { st.Batches[0][0]++; return func() { st.Batches[0][0]-- } }},
		{"item count", func(st *Stats) func() { st.Items[1][0]++; return func() { st.Items[1][0]-- } }},
	}
	for _, c := range tamper {
		undo := c.f(&s.stats)
		if err := s.Check(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: Check = %v", c.name, err)
		}
		undo()
		mustOK(t, c.name+" undone", s.Check())
	}
	s.completed = 1
	if err := s.Check(); !errors.Is(err, ErrProtocol) {
		t.Errorf("incomplete: Check = %v", err)
	}
	s.failed = true
	mustOK(t, "incomplete after failure", s.Check())
}

func TestErrorsNameRankAndSlot(t *testing.T) {
	s := mustNew(t, Config{Items: 1, BatchSize: 1, Slots: []int{1, 3}})
	err := s.OnResult(1, 2, 0, []int64{0}, true)
	var se *Error
	if !errors.As(err, &se) || se.Rank != 1 || !strings.HasPrefix(se.Msg, "slot 2: ") {
		t.Fatalf("error %#v", err)
	}
	if got := err.Error(); !strings.Contains(got, "OnResult (rank 1): slot 2: ") || !strings.HasSuffix(got, ErrProtocol.Error()) {
		t.Fatalf("message %q", got)
	}
}

// RankStopped holds exactly between a rank's last STOP and its DRAIN.
func TestRankStopped(t *testing.T) {
	s, err := New(Config{Items: 1, BatchSize: 1, Root: 0, Slots: []int{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if s.RankStopped(1) || s.RankStopped(-1) || s.RankStopped(2) {
		t.Fatal("a rank with idle slots (or an invalid rank) reported stopped")
	}
	if d, _, err := s.OnReady(1, 0); err != nil || d != Assign {
		t.Fatalf("OnReady(1, 0) = %v, %v", d, err)
	}
	if d, _, err := s.OnReady(1, 1); err != nil || d != Stop {
		t.Fatalf("OnReady(1, 1) = %v, %v", d, err)
	}
	if s.RankStopped(1) {
		t.Fatal("rank 1 stopped with a slot still running")
	}
	if err := s.OnResult(1, 0, 0, []int64{0}, true); err != nil {
		t.Fatal(err)
	}
	if d, _, err := s.OnReady(1, 0); err != nil || d != Stop {
		t.Fatalf("second OnReady(1, 0) = %v, %v", d, err)
	}
	if !s.RankStopped(1) {
		t.Fatal("rank 1 not stopped after both slots got STOP")
	}
	if err := s.OnDrain(1); err != nil {
		t.Fatal(err)
	}
	if s.RankStopped(1) {
		t.Fatal("a drained rank reported stopped")
	}
}

func TestRemoteBusy(t *testing.T) {
	s, err := New(Config{Items: 10, BatchSize: 1, Root: 1, Slots: []int{2, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	ready := func(rank, slot int) {
		t.Helper()
		if d, _, err := s.OnReady(rank, slot); err != nil || d != Assign {
			t.Fatalf("OnReady(%d, %d) = %v, %v", rank, slot, d, err)
		}
	}
	ready(0, 0)
	ready(0, 1)
	if d, _, err := s.RootDispatch(0); err != nil || d != Assign {
		t.Fatalf("RootDispatch = %v, %v", d, err)
	}
	if s.RemoteBusy() {
		t.Fatal("busy with rank 2's slot idle (the root's slot does not count)")
	}
	ready(2, 0)
	if !s.RemoteBusy() {
		t.Fatal("not busy with every other rank's slot running")
	}
	if err := s.CompleteRoot(0, true); err != nil {
		t.Fatal(err)
	}
	if !s.RemoteBusy() {
		t.Fatal("the root's completion changed RemoteBusy")
	}
	if err := s.OnResult(0, 1, 1, []int64{1}, true); err != nil {
		t.Fatal(err)
	}
	if s.RemoteBusy() {
		t.Fatal("busy after rank 0's slot 1 returned its batch")
	}
	if _, err := s.FailRunning(2, 0); err != nil {
		t.Fatal(err)
	}
	if d, _, err := s.OnReady(0, 1); err != nil || d != Stop || s.RemoteBusy() {
		t.Fatalf("OnReady after a failure = %v, %v; busy %v", d, err, s.RemoteBusy())
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	one, err := New(Config{Items: 1, Root: 0, Slots: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, err := one.RootDispatch(0); err != nil || d != Assign || one.RemoteBusy() {
		t.Fatalf("world of one: RootDispatch = %v, %v; busy %v", d, err, one.RemoteBusy())
	}
}
