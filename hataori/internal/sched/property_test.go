package sched

import (
	"errors"
	"math/rand/v2"
	"testing"
)

type simMsg struct {
	kind    string // READY, TASK, STOP, RESULT, DRAIN
	batch   Batch
	indices []int64
	ok      bool
}

// TestRandomInterleavings drives the root scheduler and one Worker per
// remote rank through many random interleavings of message delivery,
// completion, failures and rejected bogus RESULTs, and checks the
// protocol's invariants at the end of each run.
func TestRandomInterleavings(t *testing.T) {
	for seed := range uint64(3000) {
		runSim(t, seed)
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
}

func runSim(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	ranks := 1 + rng.IntN(5)
	cfg := Config{Items: rng.IntN(40), BatchSize: 1 + rng.IntN(6), Ranks: ranks, Root: rng.IntN(ranks)}
	failProb := []float64{0, 0, 0.02, 0.2}[rng.IntN(4)]
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	workers := make([]*Worker, ranks)
	toRoot := make([][]simMsg, ranks) // per sender FIFO, like MPI pairwise order
	toWorker := make([][]simMsg, ranks)
	running := make([]Batch, ranks)
	for r := range workers {
		workers[r] = NewWorker(r)
	}
	execs := make([]int, cfg.Items)
	exec := func(b Batch) {
		for i := b.Start; i < b.End(); i++ {
			execs[i]++
		}
	}
	anyFailure := false

	for step := 0; step < 100000; step++ {
		if s.Done() {
			break
		}
		var moves []func()
		root := cfg.Root
		// Root lane.
		switch s.State(root) {
		case Idle:
			moves = append(moves, func() {
				d, b, err := s.RootDispatch()
				if err != nil {
					t.Fatalf("RootDispatch: %v", err)
				}
				if d == Stop {
					if err := s.OnDrain(root); err != nil {
						t.Fatalf("root drain: %v", err)
					}
					return
				}
				running[root] = b
				exec(b)
			})
		case Running:
			moves = append(moves, func() {
				ok := rng.Float64() >= failProb
				anyFailure = anyFailure || !ok
				if err := s.CompleteRoot(ok); err != nil {
					t.Fatalf("CompleteRoot: %v", err)
				}
			})
		}
		for r := range ranks {
			if r == root {
				continue
			}
			w := workers[r]
			switch {
			case w.State() == Idle:
				moves = append(moves, func() {
					if err := w.SendReady(); err != nil {
						t.Fatal(err)
					}
					toRoot[r] = append(toRoot[r], simMsg{kind: "READY"})
				})
			case w.State() == ReadySent && len(toWorker[r]) > 0:
				moves = append(moves, func() {
					m := toWorker[r][0]
					toWorker[r] = toWorker[r][1:]
					if m.kind == "STOP" {
						if err := w.OnStop(); err != nil {
							t.Fatal(err)
						}
						if err := w.SendDrain(); err != nil {
							t.Fatal(err)
						}
						toRoot[r] = append(toRoot[r], simMsg{kind: "DRAIN"})
						return
					}
					if err := w.OnTask(m.batch.ID); err != nil {
						t.Fatal(err)
					}
					running[r] = m.batch
					exec(m.batch)
				})
			case w.State() == Running:
				moves = append(moves, func() {
					ok := rng.Float64() >= failProb
					anyFailure = anyFailure || !ok
					if err := w.SendResult(); err != nil {
						t.Fatal(err)
					}
					b := running[r]
					toRoot[r] = append(toRoot[r], simMsg{kind: "RESULT", batch: b, indices: b.Indices(), ok: ok})
				})
			}
			if len(toRoot[r]) > 0 {
				moves = append(moves, func() {
					m := toRoot[r][0]
					toRoot[r] = toRoot[r][1:]
					switch m.kind {
					case "READY":
						d, b, err := s.OnReady(r)
						if err != nil {
							t.Fatalf("OnReady(%d): %v", r, err)
						}
						if d == Stop {
							toWorker[r] = append(toWorker[r], simMsg{kind: "STOP"})
						} else {
							toWorker[r] = append(toWorker[r], simMsg{kind: "TASK", batch: b})
						}
					case "RESULT":
						if rng.IntN(8) == 0 { // a bogus RESULT first: rejected, no change
							bad := append([]int64(nil), m.indices...)
							id := m.batch.ID
							if len(bad) > 0 && rng.IntN(2) == 0 {
								bad[rng.IntN(len(bad))] += 1 + int64(rng.IntN(3))
							} else {
								id += 1 + int64(rng.IntN(3))
							}
							before := s.Completed()
							if err := s.OnResult(r, id, bad, m.ok); !errors.Is(err, ErrProtocol) {
								t.Fatalf("bogus RESULT accepted: %v", err)
							}
							if s.Completed() != before || s.State(r) != Running {
								t.Fatal("bogus RESULT changed state")
							}
						}
						if err := s.OnResult(r, m.batch.ID, m.indices, m.ok); err != nil {
							t.Fatalf("OnResult(%d): %v", r, err)
						}
					case "DRAIN":
						if err := s.OnDrain(r); err != nil {
							t.Fatalf("OnDrain(%d): %v", r, err)
						}
					}
				})
			}
		}
		if failProb > 0 && rng.IntN(500) == 0 {
			moves = append(moves, func() { s.Fail(); anyFailure = true })
		}
		if len(moves) == 0 {
			t.Fatalf("seed %d: stuck at step %d (cfg %+v)", seed, step, cfg)
		}
		moves[rng.IntN(len(moves))]()
		if st := s.Stats(); st.MaxRunning > 1 || st.Prefetched != 0 {
			t.Fatalf("capacity broken: %+v", st)
		}
	}
	if !s.Done() {
		t.Fatalf("seed %d: not done (cfg %+v)", seed, cfg)
	}
	if err := s.Check(); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	for r, w := range workers {
		if r == cfg.Root {
			continue
		}
		tasks, results, stops, drains := w.Counts()
		if tasks != results || stops != 1 || drains != 1 || w.State() != Drained {
			t.Fatalf("seed %d rank %d: tasks %d results %d stops %d drains %d state %v", seed, r, tasks, results, stops, drains, w.State())
		}
	}
	for i, n := range execs {
		if n > 1 || (!anyFailure && n != 1) {
			t.Fatalf("seed %d: item %d executed %d times (failure %v)", seed, i, n, anyFailure)
		}
	}
	if !anyFailure && s.Completed() != cfg.Items {
		t.Fatalf("seed %d: completed %d of %d", seed, s.Completed(), cfg.Items)
	}
}
