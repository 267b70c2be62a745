package sched

import (
	"errors"
	"testing"
)

func TestWorkerLifecycle(t *testing.T) {
	w := NewWorker(3)
	steps := []struct {
		name string
		f    func() error
		want State
	}{
		{"ready", w.SendReady, ReadySent},
		{"task 0", func() error { return w.OnTask(0) }, Running},
		{"result", w.SendResult, Idle},
		{"ready", w.SendReady, ReadySent},
		{"task 4", func() error { return w.OnTask(4) }, Running},
		{"result", w.SendResult, Idle},
		{"ready", w.SendReady, ReadySent},
		{"stop", w.OnStop, StopReceived},
		{"drain", w.SendDrain, Drained},
	}
	for _, s := range steps {
		if err := s.f(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if w.State() != s.want {
			t.Fatalf("%s: state %v, want %v", s.name, w.State(), s.want)
		}
	}
	if tk, r, st, d := w.Counts(); tk != 2 || r != 2 || st != 1 || d != 1 {
		t.Fatalf("counts %d %d %d %d", tk, r, st, d)
	}
}

func TestWorkerRejectsOutOfOrder(t *testing.T) {
	w := NewWorker(1)
	for name, f := range map[string]func() error{
		"task before ready":  func() error { return w.OnTask(0) },
		"stop before ready":  w.OnStop,
		"result while idle":  w.SendResult,
		"drain without stop": w.SendDrain,
	} {
		if err := f(); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: %v", name, err)
		}
		if w.State() != Idle {
			t.Fatalf("%s changed state to %v", name, w.State())
		}
	}
	w.SendReady()
	w.OnTask(5)
	w.SendResult()
	w.SendReady()
	if err := w.OnTask(5); !errors.Is(err, ErrProtocol) {
		t.Fatalf("repeated batch id: %v", err)
	}
	if w.State() != ReadySent {
		t.Fatalf("state %v", w.State())
	}
}
