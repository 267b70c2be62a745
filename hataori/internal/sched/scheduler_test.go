package sched

import (
	"errors"
	"math"
	"reflect"
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

func TestNewRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Items: -1, BatchSize: 1, Ranks: 1},
		{Items: 1, BatchSize: 0, Ranks: 1},
		{Items: 1, BatchSize: 1, Ranks: 0},
		{Items: 1, BatchSize: 1, Ranks: 2, Root: 2},
		{Items: 1, BatchSize: 1, Ranks: 2, Root: -1},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

func TestBatchesAreContiguousFIFO(t *testing.T) {
	s := mustNew(t, Config{Items: 7, BatchSize: 3, Ranks: 3, Root: 1})
	want := []Batch{{0, 0, 3}, {1, 3, 3}, {2, 6, 1}}
	d, b, err := s.OnReady(0)
	if err != nil || d != Assign || b != want[0] {
		t.Fatalf("OnReady(0) = %v %+v %v", d, b, err)
	}
	d, b, err = s.RootDispatch()
	if err != nil || d != Assign || b != want[1] {
		t.Fatalf("RootDispatch = %v %+v %v", d, b, err)
	}
	d, b, err = s.OnReady(2)
	if err != nil || d != Assign || b != want[2] {
		t.Fatalf("OnReady(2) = %v %+v %v", d, b, err)
	}
	if got := want[2].Indices(); !reflect.DeepEqual(got, []int64{6}) {
		t.Fatalf("Indices = %v", got)
	}
	if s.Remaining() != 0 {
		t.Fatalf("Remaining = %d", s.Remaining())
	}
}

func TestRootDispatchWhileRunningIsProtocolError(t *testing.T) {
	s := mustNew(t, Config{Items: 4, BatchSize: 1, Ranks: 1})
	if d, _, err := s.RootDispatch(); err != nil || d != Assign {
		t.Fatalf("first dispatch: %v %v", d, err)
	}
	before := s.Stats()
	_, _, err := s.RootDispatch()
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("second dispatch = %v, want ErrProtocol", err)
	}
	var se *Error
	if !errors.As(err, &se) || se.Op != "RootDispatch" || se.Rank != 0 {
		t.Fatalf("error %#v", err)
	}
	if s.State(0) != Running || s.Remaining() != 3 || !reflect.DeepEqual(before, s.Stats()) {
		t.Fatalf("state changed: %v remaining %d", s.State(0), s.Remaining())
	}
}

func TestWorldSizeOneRunsEverythingOnRoot(t *testing.T) {
	s := mustNew(t, Config{Items: 5, BatchSize: 2, Ranks: 1})
	for {
		d, _, err := s.RootDispatch()
		if err != nil {
			t.Fatal(err)
		}
		if d == Stop {
			break
		}
		if err := s.CompleteRoot(true); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.OnDrain(0); err != nil {
		t.Fatal(err)
	}
	if !s.Done() || s.Completed() != 5 {
		t.Fatalf("done %v completed %d", s.Done(), s.Completed())
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Assigned != 3 || st.Results != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestEmptyInputStopsEveryone(t *testing.T) {
	s := mustNew(t, Config{Items: 0, BatchSize: 1, Ranks: 3, Root: 2})
	for _, r := range []int{0, 1} {
		if d, _, err := s.OnReady(r); err != nil || d != Stop {
			t.Fatalf("OnReady(%d) = %v %v", r, d, err)
		}
	}
	if d, _, err := s.RootDispatch(); err != nil || d != Stop {
		t.Fatalf("RootDispatch = %v %v", d, err)
	}
	for r := range 3 {
		if err := s.OnDrain(r); err != nil {
			t.Fatal(err)
		}
	}
	if !s.Done() {
		t.Fatal("not done")
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// A bad RESULT must be rejected and leave every table untouched.
func TestBadResultLeavesTablesUntouched(t *testing.T) {
	cases := []struct {
		name    string
		rank    int
		id      int64
		indices []int64
	}{
		{"wrong id", 1, 7, []int64{2, 3}},
		{"short", 1, 1, []int64{2}},
		{"long", 1, 1, []int64{2, 3, 4}},
		{"wrong order", 1, 1, []int64{3, 2}},
		{"wrong start", 1, 1, []int64{0, 1}},
		{"idle lane", 2, 1, []int64{2, 3}},
		{"root via OnResult when idle", 0, 1, []int64{2, 3}},
		{"rank out of range", 5, 1, []int64{2, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustNew(t, Config{Items: 6, BatchSize: 2, Ranks: 3})
			if _, _, err := s.OnReady(2); err != nil { // batch 0: [0,2)
				t.Fatal(err)
			}
			if err := s.OnResult(2, 0, []int64{0, 1}, true); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.OnReady(1); err != nil { // batch 1: [2,4)
				t.Fatal(err)
			}
			snap := *s
			snapStats := s.Stats()
			snapDone := append([]bool(nil), s.done...)
			snapLanes := append([]lane(nil), s.lanes...)
			err := s.OnResult(c.rank, c.id, c.indices, true)
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("OnResult = %v, want ErrProtocol", err)
			}
			if s.completed != snap.completed || s.failed != snap.failed || s.next != snap.next ||
				s.nextID != snap.nextID || !reflect.DeepEqual(s.done, snapDone) ||
				!reflect.DeepEqual(s.lanes, snapLanes) || !reflect.DeepEqual(s.Stats(), snapStats) {
				t.Fatal("tables changed by a rejected RESULT")
			}
			// The valid RESULT is still accepted afterwards.
			if err := s.OnResult(1, 1, []int64{2, 3}, true); err != nil {
				t.Fatal(err)
			}
			if s.Completed() != 4 || !s.IsDone(3) || s.IsDone(4) {
				t.Fatalf("completed %d", s.Completed())
			}
		})
	}
}

func TestFailureStopsAssigningAndDrains(t *testing.T) {
	s := mustNew(t, Config{Items: 10, BatchSize: 1, Ranks: 3})
	s.OnReady(1)     // batch 0
	s.OnReady(2)     // batch 1
	s.RootDispatch() // batch 2
	if err := s.OnResult(1, 0, []int64{0}, false); err != nil {
		t.Fatal(err)
	}
	if !s.Failed() {
		t.Fatal("failure not recorded")
	}
	// Later READY gets STOP even though work remains.
	if d, _, err := s.OnReady(1); err != nil || d != Stop {
		t.Fatalf("OnReady after failure = %v %v", d, err)
	}
	// Assigned batches still finish; a valid success after failure is accepted.
	if err := s.OnResult(2, 1, []int64{1}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.CompleteRoot(true); err != nil {
		t.Fatal(err)
	}
	if d, _, _ := s.RootDispatch(); d != Stop {
		t.Fatal("root not stopped")
	}
	if d, _, _ := s.OnReady(2); d != Stop {
		t.Fatal("rank 2 not stopped")
	}
	for r := range 3 {
		if err := s.OnDrain(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.OnDrain(1); !errors.Is(err, ErrProtocol) {
		t.Fatalf("second DRAIN = %v", err)
	}
	if !s.Done() || s.Remaining() != 7 {
		t.Fatalf("done %v remaining %d", s.Done(), s.Remaining())
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestFailRunningUsesPinnedBatch(t *testing.T) {
	s := mustNew(t, Config{Items: 4, BatchSize: 2, Ranks: 2})
	s.RootDispatch() // batch 0
	s.OnReady(1)     // batch 1 [2,4)
	b, err := s.FailRunning(1)
	if err != nil || b != (Batch{ID: 1, Start: 2, Count: 2}) {
		t.Fatalf("FailRunning = %+v %v", b, err)
	}
	if s.State(1) != Idle || !s.Failed() {
		t.Fatalf("state %v failed %v", s.State(1), s.Failed())
	}
	if _, err := s.FailRunning(1); !errors.Is(err, ErrProtocol) {
		t.Fatalf("FailRunning on idle lane = %v", err)
	}
	if d, _, _ := s.OnReady(1); d != Stop {
		t.Fatal("next READY must get STOP")
	}
}

func TestProtocolErrors(t *testing.T) {
	s := mustNew(t, Config{Items: 3, BatchSize: 1, Ranks: 2})
	if _, _, err := s.OnReady(0); !errors.Is(err, ErrProtocol) {
		t.Errorf("READY from root = %v", err)
	}
	if _, _, err := s.OnReady(-1); !errors.Is(err, ErrProtocol) {
		t.Errorf("READY from -1 = %v", err)
	}
	s.OnReady(1)
	if _, _, err := s.OnReady(1); !errors.Is(err, ErrProtocol) {
		t.Errorf("second READY while running = %v", err)
	}
	if err := s.OnDrain(1); !errors.Is(err, ErrProtocol) {
		t.Errorf("DRAIN while running = %v", err)
	}
	if err := s.CompleteRoot(true); !errors.Is(err, ErrProtocol) {
		t.Errorf("CompleteRoot while idle = %v", err)
	}
}

func TestBatchIDOverflowIsChecked(t *testing.T) {
	s := mustNew(t, Config{Items: 3, BatchSize: 1, Ranks: 2})
	s.nextID = math.MaxInt64 - 1
	if d, b, err := s.OnReady(1); err != nil || d != Assign || b.ID != math.MaxInt64-1 {
		t.Fatalf("OnReady = %v %+v %v", d, b, err)
	}
	_, _, err := s.RootDispatch()
	if !errors.Is(err, ErrOverflow) {
		t.Fatalf("RootDispatch at MaxInt64 = %v, want ErrOverflow", err)
	}
	if s.State(0) != Idle || s.Remaining() != 2 {
		t.Fatal("overflow changed state")
	}
}

func TestCheckDetectsMissingDrain(t *testing.T) {
	s := mustNew(t, Config{Items: 1, BatchSize: 1, Ranks: 2})
	s.RootDispatch()
	s.CompleteRoot(true)
	s.RootDispatch()
	s.OnDrain(0)
	s.OnReady(1)
	s.OnDrain(1)
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	s.stats.Drains[1] = 2 // simulate a duplicate DRAIN count
	if err := s.Check(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("Check = %v", err)
	}
}
