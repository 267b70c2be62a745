//go:build mpirt || mpicgo

package hataori

import (
	"math"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/sched"
)

// Every RESULT carries the slot's timing in its trailer, which the root
// reads without touching the results: a successful, a failed and a partial
// RESULT alike.
func TestResultTimingTrailer(t *testing.T) {
	ok, err := wholeResult(nil, 3, []int64{7, 8}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	part, err := wholePartial(nil, 3, []int64{7, 8}, []wireFault{{Index: 7, Message: "x"}}, []string{"b"})
	if err != nil {
		t.Fatal(err)
	}
	fault := faultFrame(3, statusUser, []int64{7, 8}, wireFault{Index: 7, Message: "x"})
	for _, frame := range [][]byte{ok, part, fault} {
		putTiming(frame, 5*time.Millisecond, 2*time.Microsecond)
		h, err := wire.ParseHeader(frame)
		if err != nil {
			t.Fatal(err)
		}
		payload := frame[wire.HeaderSize:]
		c, q, got := resultTiming(payload)
		if !got || c != int64(5*time.Millisecond) || q != int64(2*time.Microsecond) {
			t.Errorf("status %d: timing %d, %d, %v", h.Status, c, q, got)
		}
		idx, rest, err := splitIndices(h, payload)
		if err != nil || len(idx) != 2 || idx[0] != 7 {
			t.Fatalf("status %d: indices %v %v", h.Status, idx, err)
		}
		if h.Status == statusOK {
			if v, err := wire.DecodeItemsOwned[string](rest, 2); err != nil || v[1] != "b" {
				t.Errorf("results %v %v", v, err)
			}
		}
	}
	// A RESULT too short for its trailer is malformed, not misread.
	if _, _, err := splitIndices(wire.Header{Kind: wire.KindResult}, make([]byte, resultTrailer-1)); err == nil {
		t.Error("a RESULT without a trailer was accepted")
	}
	if _, _, got := resultTiming(make([]byte, resultTrailer-1)); got {
		t.Error("a timing read from a short payload")
	}
}

// The root never passes the scheduler a negative or absurd duration: the
// wire values are clamped into the round trip.
func TestClampTiming(t *testing.T) {
	for _, c := range []struct {
		rt, compute, queued int64
		want                sched.Timing
	}{
		{100, 60, 10, sched.Timing{Compute: 60, RoundTrip: 100, Queued: 10}},
		{100, -5, -7, sched.Timing{RoundTrip: 100}},
		{100, 500, 9, sched.Timing{Compute: 100, RoundTrip: 100}},
		{100, 70, math.MaxInt64, sched.Timing{Compute: 70, RoundTrip: 100, Queued: 30}},
		{0, math.MinInt64, 3, sched.Timing{}},
	} {
		if got := clampTiming(c.rt, c.compute, c.queued); got != c.want {
			t.Errorf("clampTiming(%d, %d, %d) = %+v, want %+v", c.rt, c.compute, c.queued, got, c.want)
		}
	}
}

// The root's record of when each remote slot's TASK left gives one round
// trip per TASK, none without one outstanding, and each slot's last TASK
// size.
func TestTaskClock(t *testing.T) {
	c := newTaskClock([]int{2, 3, 1}, 1) // rank 1 is the root
	if len(c.at) != 3 {
		t.Fatalf("%d remote slots, want 3", len(c.at))
	}
	c.sent(0, 1, 10, 700)
	c.sent(2, 0, 15, 90)
	if rt := c.roundTrip(0, 1, 40); rt != 30 {
		t.Errorf("round trip %d, want 30", rt)
	}
	if rt := c.roundTrip(0, 1, 50); rt != -1 {
		t.Errorf("a second RESULT measured %d", rt)
	}
	if rt := c.roundTrip(0, 0, 50); rt != -1 {
		t.Errorf("a slot without a TASK measured %d", rt)
	}
	if rt := c.roundTrip(2, 0, 20); rt != 5 {
		t.Errorf("round trip %d, want 5", rt)
	}
	if a, b, z := c.taskBytes(0, 1), c.taskBytes(2, 0), c.taskBytes(0, 0); a != 700 || b != 90 || z != 0 {
		t.Errorf("TASK sizes %d, %d, %d, want 700, 90, 0", a, b, z)
	}
}

// A TASK whose indices cannot be read is keyed by its batch's first index:
// id·B for a fixed size, else the first raw index it carries (what
// taskFrame writes), else the id.
func TestFirstKey(t *testing.T) {
	task, err := taskFrame(nil, 4, 37, []int{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	j := remoteJob{id: 4, payload: task[wire.HeaderSize:]}
	for _, c := range []struct {
		batch int
		j     remoteJob
		want  int64
	}{
		{3, j, 12},
		{0, j, 37},
		{0, remoteJob{id: 4, payload: []byte{1, 2}}, 4},
		{0, remoteJob{id: 4, payload: []byte{0, 0, 0, 0, 0, 0, 0, 0x80}}, 4},
		{2, remoteJob{id: math.MaxInt64}, math.MaxInt64},
	} {
		r := &remoteLoop[int, int]{c: &call[int, int]{batch: c.batch}}
		if got := r.firstKey(c.j); got != c.want {
			t.Errorf("batch %d: firstKey = %d, want %d", c.batch, got, c.want)
		}
	}
}
