package sched

import (
	"errors"
	"reflect"
	"testing"
)

// remoteSnap is a deep copy of a Remote.
type remoteSnap struct{ w Remote }

func wsnap(w *Remote) remoteSnap {
	c := *w
	c.slots = append([]remoteSlot(nil), w.slots...)
	return remoteSnap{c}
}

func (s remoteSnap) equal(w *Remote) bool { return reflect.DeepEqual(s.w, *w) }

func wantStates(t *testing.T, what string, w *Remote, want ...State) {
	t.Helper()
	for j, st := range want {
		if got := w.State(j); got != st {
			t.Fatalf("%s: slot %d is %v, want %v", what, j, got, st)
		}
	}
}

func TestWorkerSlotsInterleaved(t *testing.T) {
	w := NewRemote(3, 3)
	if w.Slots() != 3 || w.Stopped() {
		t.Fatalf("slots %d stopped %v", w.Slots(), w.Stopped())
	}
	wantStates(t, "new", w, Idle, Idle, Idle)
	steps := []struct {
		name string
		f    func() error
		want []State
	}{
		{"ready 1", func() error { return w.SendReady(1) }, []State{Idle, ReadySent, Idle}},
		{"ready 0", func() error { return w.SendReady(0) }, []State{ReadySent, ReadySent, Idle}},
		{"task 0 to slot 1", func() error { return w.OnTask(1, 0) }, []State{ReadySent, Running, Idle}},
		{"ready 2", func() error { return w.SendReady(2) }, []State{ReadySent, Running, ReadySent}},
		{"task 3 to slot 0", func() error { return w.OnTask(0, 3) }, []State{Running, Running, ReadySent}},
		{"stop 2", func() error { return w.OnStop(2) }, []State{Running, Running, StopReceived}},
		{"result 1", func() error { return w.SendResult(1) }, []State{Running, Idle, StopReceived}},
		{"ready 1", func() error { return w.SendReady(1) }, []State{Running, ReadySent, StopReceived}},
		{"task 4 to slot 1", func() error { return w.OnTask(1, 4) }, []State{Running, Running, StopReceived}},
		{"result 0", func() error { return w.SendResult(0) }, []State{Idle, Running, StopReceived}},
		{"ready 0", func() error { return w.SendReady(0) }, []State{ReadySent, Running, StopReceived}},
		{"stop 0", func() error { return w.OnStop(0) }, []State{StopReceived, Running, StopReceived}},
		{"result 1", func() error { return w.SendResult(1) }, []State{StopReceived, Idle, StopReceived}},
		{"ready 1", func() error { return w.SendReady(1) }, []State{StopReceived, ReadySent, StopReceived}},
		{"stop 1", func() error { return w.OnStop(1) }, []State{StopReceived, StopReceived, StopReceived}},
		{"drain", w.SendDrain, []State{Drained, Drained, Drained}},
	}
	for _, s := range steps {
		if err := s.f(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		wantStates(t, s.name, w, s.want...)
		stopped := true
		for _, st := range s.want {
			stopped = stopped && (st == StopReceived || st == Drained)
		}
		if w.Stopped() != stopped {
			t.Fatalf("%s: Stopped() = %v, want %v", s.name, w.Stopped(), stopped)
		}
	}
	if w.lastID != 4 || !w.drained {
		t.Fatalf("last batch id %d, drained %v, want 4 and true", w.lastID, w.drained)
	}
}

func TestWorkerStoppedBeforeDrain(t *testing.T) {
	w := NewRemote(1, 2)
	for j := range 2 {
		if err := w.SendReady(j); err != nil {
			t.Fatal(err)
		}
		if err := w.OnStop(j); err != nil {
			t.Fatal(err)
		}
	}
	if !w.Stopped() {
		t.Fatal("every slot StopReceived but not Stopped")
	}
}

// TASK ids strictly increase over the whole rank, whichever slot ran the
// earlier batch and whether or not its RESULT went out already.
func TestWorkerIDsIncreaseAcrossSlots(t *testing.T) {
	w := NewRemote(4, 2)
	for _, err := range []error{w.SendReady(0), w.OnTask(0, 7), w.SendResult(0), w.SendReady(1), w.SendReady(0)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		slot int
		id   int64
	}{{1, 7}, {1, 6}, {0, 7}, {0, 0}} {
		before := wsnap(w)
		if err := w.OnTask(c.slot, c.id); !errors.Is(err, ErrProtocol) || !before.equal(w) {
			t.Fatalf("OnTask(%d, %d) after batch 7 = %v", c.slot, c.id, err)
		}
	}
	if err := w.OnTask(1, 9); err != nil {
		t.Fatal(err)
	}
	before := wsnap(w)
	if err := w.OnTask(0, 8); !errors.Is(err, ErrProtocol) || !before.equal(w) {
		t.Fatalf("OnTask(0, 8) after batch 9 = %v", err)
	}
	if err := w.OnTask(0, 10); err != nil {
		t.Fatal(err)
	}
	if w.lastID != 10 || w.State(0) != Running || w.State(1) != Running {
		t.Fatalf("last batch id %d, slots %v %v, want 10, Running, Running", w.lastID, w.State(0), w.State(1))
	}
}

// Every disallowed step returns a protocol error and changes nothing.
func TestWorkerRejectsOutOfOrder(t *testing.T) {
	// Slot 0 Idle, 1 ReadySent, 2 Running (batch 5), 3 StopReceived.
	setup := func(t *testing.T) *Remote {
		w := NewRemote(2, 4)
		for _, err := range []error{w.SendReady(1), w.SendReady(2), w.OnTask(2, 5), w.SendReady(3), w.OnStop(3)} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	cases := []struct {
		name string
		f    func(w *Remote) error
	}{
		{"task before ready", func(w *Remote) error { return w.OnTask(0, 6) }},
		{"stop before ready", func(w *Remote) error { return w.OnStop(0) }},
		{"result while idle", func(w *Remote) error { return w.SendResult(0) }},
		{"second ready", func(w *Remote) error { return w.SendReady(1) }},
		{"result while ready", func(w *Remote) error { return w.SendResult(1) }},
		{"repeated batch id", func(w *Remote) error { return w.OnTask(1, 5) }},
		{"older batch id", func(w *Remote) error { return w.OnTask(1, 4) }},
		{"negative batch id", func(w *Remote) error { return w.OnTask(1, -1) }},
		{"ready while running", func(w *Remote) error { return w.SendReady(2) }},
		{"task while running", func(w *Remote) error { return w.OnTask(2, 6) }},
		{"stop while running", func(w *Remote) error { return w.OnStop(2) }},
		{"ready after stop", func(w *Remote) error { return w.SendReady(3) }},
		{"task after stop", func(w *Remote) error { return w.OnTask(3, 6) }},
		{"second stop", func(w *Remote) error { return w.OnStop(3) }},
		{"result after stop", func(w *Remote) error { return w.SendResult(3) }},
		{"drain with slots active", func(w *Remote) error { return w.SendDrain() }},
		{"ready on slot -1", func(w *Remote) error { return w.SendReady(-1) }},
		{"ready on slot 4", func(w *Remote) error { return w.SendReady(4) }},
		{"task on slot 4", func(w *Remote) error { return w.OnTask(4, 6) }},
		{"result on slot 4", func(w *Remote) error { return w.SendResult(4) }},
		{"stop on slot -1", func(w *Remote) error { return w.OnStop(-1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := setup(t)
			before := wsnap(w)
			err := c.f(w)
			var se *Error
			if !errors.Is(err, ErrProtocol) || !errors.As(err, &se) || se.Rank != 2 {
				t.Fatalf("%s = %#v, want a protocol *Error for rank 2", c.name, err)
			}
			if !before.equal(w) {
				t.Fatalf("%s changed the worker: %+v -> %+v", c.name, before.w.slots, w.slots)
			}
		})
	}
	// The setup still runs to the end: a newer id is accepted on slot 1.
	w := setup(t)
	for _, err := range []error{
		w.OnTask(1, 6), w.SendResult(2), w.SendResult(1),
		w.SendReady(0), w.SendReady(1), w.SendReady(2), w.OnStop(1), w.OnStop(0),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if w.Stopped() {
		t.Fatal("stopped with slot 2 waiting")
	}
	before := wsnap(w)
	if err := w.SendDrain(); !errors.Is(err, ErrProtocol) || !before.equal(w) {
		t.Fatalf("DRAIN with slot 2 waiting = %v", err)
	}
	if err := w.OnStop(2); err != nil {
		t.Fatal(err)
	}
	if err := w.SendDrain(); err != nil {
		t.Fatal(err)
	}
	// After DRAIN nothing is allowed, a second DRAIN included.
	before = wsnap(w)
	for name, err := range map[string]error{
		"second drain":       w.SendDrain(),
		"ready after drain":  w.SendReady(0),
		"task after drain":   w.OnTask(0, 9),
		"stop after drain":   w.OnStop(1),
		"result after drain": w.SendResult(2),
	} {
		if !errors.Is(err, ErrProtocol) {
			t.Errorf("%s = %v", name, err)
		}
	}
	if !before.equal(w) || !w.Stopped() {
		t.Fatal("steps after DRAIN changed the worker")
	}
}

func TestWorkerWithoutSlots(t *testing.T) {
	for _, n := range []int{0, -2} {
		w := NewRemote(1, n)
		if w.Slots() != 0 || w.Stopped() {
			t.Fatalf("NewRemote(1, %d): slots %d stopped %v", n, w.Slots(), w.Stopped())
		}
		for name, err := range map[string]error{
			"ready": w.SendReady(0), "task": w.OnTask(0, 0), "result": w.SendResult(0),
			"stop": w.OnStop(0), "drain": w.SendDrain(),
		} {
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("%s on a worker without slots = %v", name, err)
			}
		}
		if w.lastID != -1 || w.drained || w.Stopped() {
			t.Fatal("a worker without slots changed")
		}
	}
}
