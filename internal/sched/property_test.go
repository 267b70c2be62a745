package sched

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// simMsg is one simulated MPI message; every message names its slot.
type simMsg struct {
	kind    string // READY, TASK, STOP, RESULT, DRAIN
	slot    int
	batch   Batch   // TASK: the assigned batch; RESULT: the batch the slot ran
	values  []int   // RESULT: the callback's outputs, in the batch's order
	ok      bool    // RESULT: no callback error
	corrupt bool    // RESULT: the header does not decode (the root uses FailRunning)
	indices []int64 // RESULT: the index sequence sent back
	timed   bool    // RESULT: the root passes timing (OnResultTimed)
	timing  Timing  // RESULT: the measurement
}

// TestRandomInterleavings drives the root scheduler and one Remote per
// remote rank, each with several slots, through many random interleavings
// of message delivery, completions, failures, rejected bogus RESULTs and
// rejected disallowed transitions, checking the protocol's invariants at
// every step and at the end of each run. Half the runs use automatic
// sizes, with random measurements (or none) on the completions; their
// batches must still be consecutive, increase by one in id, and respect
// the start size, the growth bound and the factoring cap.
func TestRandomInterleavings(t *testing.T) {
	seeds := uint64(3000)
	if testing.Short() {
		seeds = 500
	}
	for seed := range seeds {
		runSim(t, seed)
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
}

type sim struct {
	t        *testing.T
	seed     uint64
	rng      *rand.Rand
	cfg      Config
	s        *Scheduler
	root     int
	failProb float64

	remotes  []*Remote  // nil for the root
	toRoot   [][]simMsg // per sender FIFO, like MPI pairwise order
	toRemote [][]simMsg // per receiver FIFO
	wBatch   [][]Batch  // the batch each remote slot runs (remote view)
	wSteps   [][3]int   // per rank: TASKs, RESULTs and STOPs its Remote accepted
	inflight [][]int    // batches assigned to (rank, slot) and not yet completed
	readies  [][]int    // READYs sent per remote slot
	answers  [][]int    // TASK/STOP answers given per remote slot
	tasks    [][]int64  // batches assigned per slot (model)
	items    [][]int64  // items assigned per slot (model)
	stops    [][]int    // STOPs per slot (model)
	drains   []int      // DRAINs per rank (model)
	last     Batch      // last batch assigned
	assigned int64      // batches assigned
	assignN  []int      // per input index: times assigned
	writes   []int      // per input index: times written into the result table
	table    []int      // result table, indexed by input index
	failure  bool       // a failure happened (callback, corrupt RESULT, Fail)
	maxMeas  []int      // per rank: largest batch completed with a measurement
	sizes    [][][]int  // per slot: the sizes assigned
	total    int        // Σ slots
}

func (m *sim) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("seed %d (cfg %+v): "+format, append([]any{m.seed, m.cfg}, args...)...)
}

func grid[T any](slots []int) [][]T {
	g := make([][]T, len(slots))
	for r, n := range slots {
		g[r] = make([]T, n)
	}
	return g
}

func runSim(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5107))
	ranks := 1 + rng.IntN(5)
	slots := make([]int, ranks)
	for r := range slots {
		slots[r] = 1 + rng.IntN(4)
	}
	cfg := Config{Items: rng.IntN(61), BatchSize: 1 + rng.IntN(7), Root: rng.IntN(ranks), Slots: slots}
	if rng.IntN(2) == 0 {
		cfg.BatchSize = 0 // automatic
		if rng.IntN(3) == 0 {
			cfg.Items = rng.IntN(2000)
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := &sim{
		t: t, seed: seed, rng: rng, cfg: s.Config(), s: s, root: cfg.Root,
		failProb: []float64{0, 0, 0.02, 0.15}[rng.IntN(4)],
		remotes:  make([]*Remote, ranks),
		toRoot:   make([][]simMsg, ranks), toRemote: make([][]simMsg, ranks),
		wBatch: grid[Batch](slots), wSteps: make([][3]int, ranks), inflight: grid[int](slots),
		readies: grid[int](slots), answers: grid[int](slots),
		tasks: grid[int64](slots), items: grid[int64](slots), stops: grid[int](slots),
		drains: make([]int, ranks), last: Batch{ID: -1},
		assignN: make([]int, cfg.Items), writes: make([]int, cfg.Items), table: make([]int, cfg.Items),
		maxMeas: make([]int, ranks), sizes: grid[[]int](slots),
	}
	for _, n := range slots {
		m.total += n
	}
	for i := range m.table {
		m.table[i] = -1
	}
	for r := range ranks {
		if r != m.root {
			m.remotes[r] = NewRemote(r, slots[r])
		}
	}

	var moves []func()
	for step := 0; !s.Done(); step++ {
		if step == 200000 {
			m.fatalf("not done after %d steps", step)
		}
		moves = m.enabled(moves[:0])
		if len(moves) == 0 {
			m.fatalf("stuck at step %d", step)
		}
		moves[rng.IntN(len(moves))]()
		m.checkStep()
	}
	m.checkEnd()
}

// enabled lists every action the simulated call can take now.
func (m *sim) enabled(moves []func()) []func() {
	s, root := m.s, m.root
	// The root's own slots.
	stopped := true
	for j := range m.cfg.Slots[root] {
		switch s.State(root, j) {
		case Idle:
			moves = append(moves, func() { m.rootDispatch(j) })
		case Running:
			moves = append(moves, func() { m.rootComplete(j) })
		}
		stopped = stopped && s.State(root, j) == StopReceived
	}
	if stopped && !s.RankDrained(root) {
		moves = append(moves, func() { m.drain(root) })
	}
	// Remote ranks: their slots, their inbox, the root's inbox from them.
	for r, w := range m.remotes {
		if w == nil {
			continue
		}
		for j := range w.Slots() {
			switch w.State(j) {
			case Idle:
				moves = append(moves, func() { m.sendReady(r, j) })
			case Running:
				moves = append(moves, func() { m.sendResult(r, j) })
			}
		}
		if len(m.toRemote[r]) > 0 {
			moves = append(moves, func() { m.remoteRecv(r) })
		}
		if w.Stopped() && w.State(0) != Drained {
			moves = append(moves, func() { m.sendDrain(r) })
		}
		if len(m.toRoot[r]) > 0 {
			moves = append(moves, func() { m.rootRecv(r) })
		}
	}
	if m.failProb > 0 && m.rng.IntN(400) == 0 {
		moves = append(moves, func() { m.s.Fail(); m.failure = true })
	}
	if m.rng.IntN(20) == 0 {
		moves = append(moves, m.bogus)
	}
	return moves
}

func (m *sim) onDecision(rank, slot int, d Decision, b Batch) {
	if d == Stop {
		m.stops[rank][slot]++
		return
	}
	if d != Assign {
		m.fatalf("decision %v", d)
	}
	if m.failure {
		m.fatalf("batch %+v assigned after a failure", b)
	}
	want := Batch{ID: m.last.ID + 1, Start: m.last.End(), Count: min(m.cfg.BatchSize, m.cfg.Items-m.last.End())}
	if m.last.ID < 0 {
		want.Start, want.Count = 0, min(m.cfg.BatchSize, m.cfg.Items)
	}
	if m.cfg.BatchSize == 0 {
		// Automatic: consecutive, ids by one, within the bounds.
		rem := m.cfg.Items - want.Start
		limit := StartSize
		if m.maxMeas[rank] > 0 {
			limit = Growth * m.maxMeas[rank]
		}
		capN := (rem + Factoring*m.total - 1) / (Factoring * m.total)
		if b.ID != want.ID || b.Start != want.Start || b.Count < 1 || b.Count > min(rem, limit, capN, MaxSize) {
			m.fatalf("assigned %+v on rank %d: want id %d, start %d, 1 ≤ count ≤ min(%d remaining, %d growth, %d cap)",
				b, rank, want.ID, want.Start, rem, limit, capN)
		}
		want.Count = b.Count
	}
	if b != want || b.Count < 1 {
		m.fatalf("assigned %+v, want %+v", b, want)
	}
	m.last = b
	m.sizes[rank][slot] = append(m.sizes[rank][slot], b.Count)
	m.assigned++
	m.inflight[rank][slot]++
	m.tasks[rank][slot]++
	m.items[rank][slot] += int64(b.Count)
	for i := b.Start; i < b.End(); i++ {
		m.assignN[i]++
	}
}

// store places a successful batch's values into the result table at the
// indices the scheduler pinned for (rank, slot).
func (m *sim) store(rank, slot int, values []int) {
	b, ok := m.s.RunningBatch(rank, slot)
	if !ok || len(values) != b.Count {
		m.fatalf("RunningBatch(%d,%d) = %+v %v for %d values", rank, slot, b, ok, len(values))
	}
	for k, v := range values {
		m.table[b.Start+k] = v
		m.writes[b.Start+k]++
	}
}

// callback is the user function: the result of item i is i, so a table
// with every result in place is the identity.
func callback(b Batch) []int {
	out := make([]int, b.Count)
	for k := range out {
		out[k] = b.Start + k
	}
	return out
}

func (m *sim) rootDispatch(j int) {
	d, b, err := m.s.RootDispatch(j)
	if err != nil {
		m.fatalf("RootDispatch(%d): %v", j, err)
	}
	m.onDecision(m.root, j, d, b)
}

func (m *sim) rootComplete(j int) {
	ok := m.rng.Float64() >= m.failProb
	m.failure = m.failure || !ok
	b, _ := m.s.RunningBatch(m.root, j)
	if ok {
		m.store(m.root, j, callback(b))
	}
	var err error
	if m.rng.IntN(4) == 0 {
		err = m.s.CompleteRoot(j, ok)
	} else {
		t := m.timing(b, false)
		if m.rng.IntN(20) == 0 {
			bad := t
			bad.Compute = -1 - bad.Compute
			before := snapshot(m.s)
			if e := m.s.CompleteRootTimed(j, ok, bad); !errors.Is(e, ErrProtocol) || !reflect.DeepEqual(before, snapshot(m.s)) {
				m.fatalf("CompleteRootTimed with %+v = %v (or it changed the scheduler)", bad, e)
			}
		}
		err = m.s.CompleteRootTimed(j, ok, t)
		m.measured(m.root, b, ok)
	}
	if err != nil {
		m.fatalf("CompleteRoot(%d): %v", j, err)
	}
	m.inflight[m.root][j]--
}

// timing draws a measurement for b: random per-item costs (sometimes
// zero), and for a remote slot a round trip and a queueing time.
func (m *sim) timing(b Batch, remote bool) Timing {
	per := time.Duration(m.rng.IntN(3)) * time.Duration(1+m.rng.IntN(50000))
	t := Timing{Compute: per * time.Duration(b.Count)}
	if remote {
		t.RoundTrip = t.Compute + time.Duration(m.rng.IntN(200000))
		if m.rng.IntN(3) == 0 {
			t.Queued = time.Duration(m.rng.IntN(100000))
		}
	}
	return t
}

// measured records a timed completion of b on rank in the model.
func (m *sim) measured(rank int, b Batch, ok bool) {
	if ok {
		m.maxMeas[rank] = max(m.maxMeas[rank], b.Count)
	}
}

func (m *sim) drain(r int) {
	if err := m.s.OnDrain(r); err != nil {
		m.fatalf("OnDrain(%d): %v", r, err)
	}
	m.drains[r]++
}

func (m *sim) sendReady(r, j int) {
	if err := m.remotes[r].SendReady(j); err != nil {
		m.fatalf("remote %d SendReady(%d): %v", r, j, err)
	}
	m.readies[r][j]++
	m.toRoot[r] = append(m.toRoot[r], simMsg{kind: "READY", slot: j})
}

func (m *sim) sendResult(r, j int) {
	w := m.remotes[r]
	b := m.wBatch[r][j]
	msg := simMsg{kind: "RESULT", slot: j, batch: b, indices: b.Indices(), ok: m.rng.Float64() >= m.failProb}
	if m.rng.IntN(4) != 0 {
		msg.timed, msg.timing = true, m.timing(b, true)
	}
	if msg.ok {
		msg.values = callback(b)
	}
	if m.failProb > 0 && m.rng.IntN(30) == 0 {
		msg.corrupt = true
	}
	if err := w.SendResult(j); err != nil {
		m.fatalf("remote %d SendResult(%d): %v", r, j, err)
	}
	m.wSteps[r][1]++
	m.toRoot[r] = append(m.toRoot[r], msg)
}

func (m *sim) remoteRecv(r int) {
	w := m.remotes[r]
	msg := m.toRemote[r][0]
	m.toRemote[r] = m.toRemote[r][1:]
	switch msg.kind {
	case "TASK":
		if err := w.OnTask(msg.slot, msg.batch.ID); err != nil {
			m.fatalf("remote %d OnTask(%d, %d): %v", r, msg.slot, msg.batch.ID, err)
		}
		m.wBatch[r][msg.slot] = msg.batch
		m.wSteps[r][0]++
	case "STOP":
		if err := w.OnStop(msg.slot); err != nil {
			m.fatalf("remote %d OnStop(%d): %v", r, msg.slot, err)
		}
		m.wSteps[r][2]++
	default:
		m.fatalf("remote %d got %s", r, msg.kind)
	}
}

func (m *sim) sendDrain(r int) {
	if err := m.remotes[r].SendDrain(); err != nil {
		m.fatalf("remote %d SendDrain: %v", r, err)
	}
	m.toRoot[r] = append(m.toRoot[r], simMsg{kind: "DRAIN"})
}

func (m *sim) rootRecv(r int) {
	s := m.s
	msg := m.toRoot[r][0]
	m.toRoot[r] = m.toRoot[r][1:]
	switch msg.kind {
	case "READY":
		d, b, err := s.OnReady(r, msg.slot)
		if err != nil {
			m.fatalf("OnReady(%d,%d): %v", r, msg.slot, err)
		}
		m.onDecision(r, msg.slot, d, b)
		m.answers[r][msg.slot]++
		if d == Stop {
			m.toRemote[r] = append(m.toRemote[r], simMsg{kind: "STOP", slot: msg.slot})
		} else {
			m.toRemote[r] = append(m.toRemote[r], simMsg{kind: "TASK", slot: msg.slot, batch: b})
		}
	case "RESULT":
		if msg.corrupt {
			b, err := s.FailRunning(r, msg.slot)
			if err != nil || b != msg.batch {
				m.fatalf("FailRunning(%d,%d) = %+v %v, want %+v", r, msg.slot, b, err, msg.batch)
			}
			m.failure = true
			m.inflight[r][msg.slot]--
			return
		}
		if m.rng.IntN(6) == 0 {
			m.bogusResult(r, msg)
		}
		if err := s.ValidateResult(r, msg.slot, msg.batch.ID, msg.indices); err != nil {
			m.fatalf("ValidateResult(%d,%d): %v", r, msg.slot, err)
		}
		if msg.ok {
			m.store(r, msg.slot, msg.values)
		} else {
			m.failure = true
		}
		var err error
		if msg.timed {
			if m.rng.IntN(20) == 0 {
				bad := msg.timing
				bad.RoundTrip = -1 - bad.RoundTrip
				before := snapshot(m.s)
				if e := s.OnResultTimed(r, msg.slot, msg.batch.ID, msg.indices, msg.ok, bad); !errors.Is(e, ErrProtocol) || !reflect.DeepEqual(before, snapshot(m.s)) {
					m.fatalf("OnResultTimed with %+v = %v (or it changed the scheduler)", bad, e)
				}
			}
			err = s.OnResultTimed(r, msg.slot, msg.batch.ID, msg.indices, msg.ok, msg.timing)
			m.measured(r, msg.batch, msg.ok)
		} else {
			err = s.OnResult(r, msg.slot, msg.batch.ID, msg.indices, msg.ok)
		}
		if err != nil {
			m.fatalf("OnResult(%d,%d): %v", r, msg.slot, err)
		}
		m.inflight[r][msg.slot]--
	case "DRAIN":
		m.drain(r)
	default:
		m.fatalf("root got %s from %d", msg.kind, r)
	}
}

// bogusResult feeds a damaged copy of msg (wrong id, wrong indices or the
// wrong slot) and requires a rejection that changes nothing.
func (m *sim) bogusResult(r int, msg simMsg) {
	slot, id, idx := msg.slot, msg.batch.ID, append([]int64(nil), msg.indices...)
	switch m.rng.IntN(5) {
	case 0:
		id += 1 + int64(m.rng.IntN(3))
	case 1:
		id -= 1 + int64(m.rng.IntN(3))
	case 2:
		idx[m.rng.IntN(len(idx))] += 1 + int64(m.rng.IntN(3))
	case 3:
		if m.rng.IntN(2) == 0 {
			idx = idx[:len(idx)-1]
		} else {
			idx = append(idx, int64(msg.batch.End()))
		}
	case 4:
		if m.cfg.Slots[r] == 1 {
			slot = 1 // out of range
		} else {
			slot = (slot + 1 + m.rng.IntN(m.cfg.Slots[r]-1)) % m.cfg.Slots[r]
		}
		if b, ok := m.s.RunningBatch(r, slot); ok && b.ID == id {
			m.fatalf("two slots pin batch %d", id)
		}
	}
	before := snapshot(m.s)
	errV := m.s.ValidateResult(r, slot, id, idx)
	errR := m.s.OnResult(r, slot, id, idx, msg.ok)
	if !errors.Is(errV, ErrProtocol) || !errors.Is(errR, ErrProtocol) {
		m.fatalf("bogus RESULT (%d,%d,%d,%v) accepted: %v / %v", r, slot, id, idx, errV, errR)
	}
	if !reflect.DeepEqual(before, snapshot(m.s)) {
		m.fatalf("bogus RESULT changed the scheduler")
	}
}

// bogus tries a random transition that the protocol does not allow now
// and requires a protocol error that changes nothing.
func (m *sim) bogus() {
	s := m.s
	r := m.rng.IntN(len(m.cfg.Slots)+2) - 1 // -1 .. ranks
	j := -1
	if s.SlotCount(r) > 0 {
		j = m.rng.IntN(s.SlotCount(r)+2) - 1 // -1 .. slots
	}
	valid := s.SlotCount(r) > 0 && j >= 0 && j < s.SlotCount(r)
	st := s.State(r, j)
	var err error
	before := snapshot(s)
	switch m.rng.IntN(6) {
	case 0:
		if valid && r != m.root && st == Idle {
			return // allowed: a READY the worker did not send
		}
		_, _, err = s.OnReady(r, j)
	case 1:
		if s.State(m.root, j) == Idle {
			return
		}
		_, _, err = s.RootDispatch(j)
	case 2:
		if b, ok := s.RunningBatch(r, j); ok {
			if r != m.root {
				return // the genuine RESULT is in flight or due
			}
			err = s.OnResult(r, j, b.ID, b.Indices(), true) // the root sends no RESULT
		} else {
			err = s.OnResult(r, j, m.last.ID, m.last.Indices(), true)
		}
	case 3:
		if s.State(m.root, j) == Running {
			return
		}
		err = s.CompleteRoot(j, m.rng.IntN(2) == 0)
	case 4:
		if st == Running {
			return
		}
		_, err = s.FailRunning(r, j)
	case 5:
		all := s.SlotCount(r) > 0 && !s.RankDrained(r)
		for k := range s.SlotCount(r) {
			all = all && s.State(r, k) == StopReceived
		}
		if all {
			return
		}
		err = s.OnDrain(r)
	}
	if !errors.Is(err, ErrProtocol) {
		m.fatalf("disallowed transition (rank %d slot %d state %v) = %v", r, j, st, err)
	}
	if !reflect.DeepEqual(before, snapshot(s)) {
		m.fatalf("disallowed transition (rank %d slot %d) changed the scheduler", r, j)
	}
}

// checkStep checks the invariants that hold at every step.
func (m *sim) checkStep() {
	st := m.s.Stats()
	if st.Assigned != m.assigned {
		m.fatalf("Assigned %d, model %d", st.Assigned, m.assigned)
	}
	remote, holding := 0, 0 // the other ranks' slots, and those holding a batch in the model
	for r := range m.cfg.Slots {
		for j := range m.cfg.Slots[r] {
			if r != m.cfg.Root {
				remote++
				if m.inflight[r][j] == 1 {
					holding++
				}
			}
		}
	}
	if busy := remote > 0 && holding == remote; m.s.RemoteBusy() != busy {
		m.fatalf("RemoteBusy %v with %d of %d remote slots holding a batch", m.s.RemoteBusy(), holding, remote)
	}
	for r := range m.cfg.Slots {
		if st.Drains[r] != m.drains[r] {
			m.fatalf("Drains[%d] = %d, model %d", r, st.Drains[r], m.drains[r])
		}
		for j := range m.cfg.Slots[r] {
			if st.Batches[r][j] != m.tasks[r][j] || st.Items[r][j] != m.items[r][j] || st.Stops[r][j] != m.stops[r][j] {
				m.fatalf("slot (%d,%d): stats batches %d items %d stops %d, model %d %d %d", r, j,
					st.Batches[r][j], st.Items[r][j], st.Stops[r][j], m.tasks[r][j], m.items[r][j], m.stops[r][j])
			}
			n := m.inflight[r][j]
			running := m.s.State(r, j) == Running
			if n < 0 || n > 1 || running != (n == 1) {
				m.fatalf("slot (%d,%d) holds %d batches in state %v", r, j, n, m.s.State(r, j))
			}
			if a, q := m.answers[r][j], m.readies[r][j]; a > q || q > a+1 {
				m.fatalf("slot (%d,%d): %d answers to %d READYs", r, j, a, q)
			}
		}
	}
	if err := m.s.Check(); err != nil {
		m.fatalf("Check: %v", err)
	}
}

func (m *sim) checkEnd() {
	s := m.s
	if err := s.Check(); err != nil {
		m.fatalf("Check: %v", err)
	}
	st := s.Stats()
	if st.Results != st.Assigned || st.Assigned != m.assigned {
		m.fatalf("%d results, %d assigned (model %d)", st.Results, st.Assigned, m.assigned)
	}
	for r := range m.cfg.Slots {
		if m.drains[r] != 1 || !s.RankDrained(r) || len(m.toRoot[r]) != 0 || len(m.toRemote[r]) != 0 {
			m.fatalf("rank %d: %d DRAINs, drained %v, %d/%d messages left", r, m.drains[r], s.RankDrained(r), len(m.toRoot[r]), len(m.toRemote[r]))
		}
		for j := range m.cfg.Slots[r] {
			if m.stops[r][j] != 1 || s.State(r, j) != Drained {
				m.fatalf("slot (%d,%d): %d STOPs, state %v", r, j, m.stops[r][j], s.State(r, j))
			}
			if r != m.root && m.answers[r][j] != m.readies[r][j] {
				m.fatalf("slot (%d,%d): %d answers to %d READYs", r, j, m.answers[r][j], m.readies[r][j])
			}
		}
		w := m.remotes[r]
		if w == nil {
			continue
		}
		var batches int64
		for _, n := range m.tasks[r] {
			batches += n
		}
		tasks, results, stops := m.wSteps[r][0], m.wSteps[r][1], m.wSteps[r][2]
		if int64(tasks) != batches || results != tasks || stops != w.Slots() || !w.Stopped() {
			m.fatalf("remote %d: tasks %d (assigned %d) results %d stops %d", r, tasks, batches, results, stops)
		}
		for j := range w.Slots() {
			if w.State(j) != Drained {
				m.fatalf("remote %d slot %d is %v", r, j, w.State(j))
			}
		}
	}
	for r := range m.cfg.Slots {
		for j, sz := range m.sizes[r] {
			want := Sizes{}
			if len(sz) > 0 {
				sz = slices.Sorted(slices.Values(sz))
				want = Sizes{Batches: int64(len(sz)), Min: sz[0], Median: sz[(len(sz)-1)/2], Max: sz[len(sz)-1]}
			}
			if st.Sizes[r][j] != want {
				m.fatalf("slot (%d,%d): Sizes %+v, model %+v", r, j, st.Sizes[r][j], want)
			}
		}
	}
	completed := 0
	for i := range m.cfg.Items {
		if m.assignN[i] > 1 || m.writes[i] > 1 {
			m.fatalf("item %d assigned %d times, written %d times", i, m.assignN[i], m.writes[i])
		}
		if !m.failure && (m.assignN[i] != 1 || m.writes[i] != 1) {
			m.fatalf("item %d assigned %d times, written %d times without failure", i, m.assignN[i], m.writes[i])
		}
		if s.IsDone(i) != (m.writes[i] == 1) {
			m.fatalf("item %d: IsDone %v, written %d times", i, s.IsDone(i), m.writes[i])
		}
		if m.writes[i] == 1 {
			completed++
			if m.table[i] != i {
				m.fatalf("result table[%d] = %d: results out of input order", i, m.table[i])
			}
		}
	}
	if completed != s.Completed() || s.Failed() != m.failure {
		m.fatalf("completed %d (model %d), failed %v (model %v)", s.Completed(), completed, s.Failed(), m.failure)
	}
	if !m.failure && (s.Remaining() != 0 || s.Completed() != m.cfg.Items) {
		m.fatalf("no failure, but %d remaining, %d of %d completed", s.Remaining(), s.Completed(), m.cfg.Items)
	}
}
