//go:build mpirt || mpicgo

package hataori

// Helpers shared by the multi-rank tests of this package (the *_mpi_test.go
// files): the per-rank environment (rankEnv: communicator, domain, rank,
// size and the cross-rank checks same, sum and sameError), the executors
// to run over (execMode), the job launcher (pmapJob), the gates that hold
// a call's TASKs or its callbacks on an event (gate, gateTasks, gated),
// the trace helpers, and checkReusable. Helpers used by a single test file
// live in that file.

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/vmihailenco/msgpack/v5"
)

// pmapJob runs test under mpirun with 1, 2 and 4 ranks.
func pmapJob(t *testing.T, test string, ranks ...int) {
	if len(ranks) == 0 {
		ranks = []int{1, 2, 4}
	}
	for _, n := range ranks {
		mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 120 * time.Second, Test: test})
	}
}

// rankEnv is one rank's view of a multi-rank Pmap test.
type rankEnv struct {
	t          *testing.T
	rank, size int
	world      Comm
	dom        *Domain
}

func newRankEnv(t *testing.T) *rankEnv {
	// The short path (pmap_short.go) is chosen from measured times, so a
	// test that asserts where callbacks run or which messages flow
	// could pass or fail with the schedule: these tests run the slots'
	// path; TestPmapShortPath turns it back on.
	old := shortWork
	shortWork = 0
	t.Cleanup(func() { shortWork = old })
	rank, size := mpitest.Init(t)
	d, err := NewDomain(DomainConfig{Oversubscribe: true, Workers: 2, Pinning: Declared})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return &rankEnv{t: t, rank: rank, size: size, world: pmapWorld(t), dom: d}
}

// same reports whether every rank passed the same v (MIN of v and of ^v).
func (e *rankEnv) same(v int64) bool {
	m := make([]int64, 2)
	if err := mpi.AllreduceMinInt64s(mpi.World(), []int64{v, ^v}, m); err != nil {
		e.t.Fatal(err)
	}
	return m[0] == ^m[1]
}

// sum adds v over all ranks (gathered at rank 0 with point-to-point
// messages on the world communicator, then broadcast).
func (e *rankEnv) sum(v int64) int64 {
	w := mpi.World()
	buf := make([]byte, 8)
	if e.rank == 0 {
		total := v
		for r := 1; r < e.size; r++ {
			if _, err := mpi.Recv(w, buf, r, 99); err != nil {
				e.t.Fatal(err)
			}
			total += int64(leU64(buf))
		}
		putU64(buf, uint64(total))
	} else {
		putU64(buf, uint64(v))
		if err := mpi.Send(w, buf, 0, 99); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := mpi.Bcast(w, buf, 0); err != nil {
		e.t.Fatal(err)
	}
	return int64(leU64(buf))
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func putU64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

func hashString(s string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() >> 1)
}

// sameError checks that err is a *PmapError of kind identical on every rank.
func (e *rankEnv) sameError(what string, err error, kind ErrorKind) *PmapError {
	e.t.Helper()
	var pe *PmapError
	if !errors.As(err, &pe) {
		e.t.Errorf("%s: rank %d: error %v, want a *PmapError", what, e.rank, err)
		pe = &PmapError{Key: -2, Rank: -2}
	} else if pe.Kind != kind {
		e.t.Errorf("%s: rank %d: kind %v, want %v (%v)", what, e.rank, pe.Kind, kind, pe)
	}
	if !e.same(pe.Key) || !e.same(int64(pe.Rank)) || !e.same(hashString(pe.Message)) || !e.same(int64(pe.Kind)) {
		e.t.Errorf("%s: rank %d: error differs between ranks: %v", what, e.rank, pe)
	}
	if n := strings.Count(pe.Error(), "hataori:"); n != 1 {
		e.t.Errorf("%s: rank %d: %q says \"hataori:\" %d times, want once", what, e.rank, pe.Error(), n)
	}
	return pe
}

// modes lists the executors a test runs over: MPI-only and the three
// hybrid modes.
func (e *rankEnv) modes() []execMode {
	return []execMode{{"mpi-only", nil, Sequential}, {"sequential", e.dom, Sequential}, {"outer", e.dom, Outer}, {"inner", e.dom, Inner}}
}

func (e *rankEnv) items(n int) Maybe[[]int] {
	if e.rank != 0 {
		return None[[]int]()
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return Some(xs)
}

// execMode is one executor of modes.
type execMode struct {
	name string
	d    *Domain
	mode LocalMode
}

// rootSlots is the number of slots the root offers with executor m: one
// per worker for Outer, one otherwise (Sequential, Inner, MPI-only).
func (m execMode) rootSlots() int {
	if m.d != nil && m.mode == Outer {
		return m.d.Workers()
	}
	return 1
}

// gateWait bounds how long a gate is waited for; a gate still closed then
// fails the test (gateTasks), it never passes it by luck.
const gateWait = 20 * time.Second

// gate is an event that a test opens from the root's callbacks and that
// the root's coordinator waits for before it encodes any TASK (through
// gated items, see gateTasks). The root's own slots take their batches
// from the scheduler directly, without the coordinator, so while the gate
// is closed at most one batch (the one whose TASK waits) is dealt to
// another rank: a test whose root callbacks open the gate once every root
// slot holds a batch knows, by that event and not by timing, that the
// root holds batches among the first slots+1, and that every later batch
// goes to another rank while the root's slots hold theirs.
type gate struct {
	want   int64 // arrivals that open it
	n      atomic.Int64
	opened chan struct{}
	once   sync.Once
	late   atomic.Bool // a wait gave up after gateWait
}

// newGate returns a closed gate that the want-th arrival opens.
func newGate(want int) *gate { return &gate{want: int64(want), opened: make(chan struct{})} }

// arrive counts one arrival (a root callback reaching its hold); the
// want-th opens the gate.
func (g *gate) arrive() {
	if g.n.Add(1) == g.want {
		g.open()
	}
}

func (g *gate) open() { g.once.Do(func() { close(g.opened) }) }

// wait blocks until the gate opens, for gateWait at most (then it notes
// that it gave up).
func (g *gate) wait() {
	select {
	case <-g.opened:
	case <-time.After(gateWait):
		g.late.Store(true)
	}
}

// taskGate is the gate the root's item encoders wait for (nil: none). Only
// rank 0 sets it (gateTasks), for one call at a time.
var taskGate atomic.Pointer[gate]

// waitTaskGate is what the msgpack encoders of gated and poison do first.
// Items are encoded only by the root's coordinator, for the TASKs of other
// ranks (the root's own batches are never encoded, and remote ranks encode
// results, not items), so this holds exactly the TASKs.
func waitTaskGate() {
	if g := taskGate.Load(); g != nil {
		g.wait()
	}
}

// gateTasks makes the root's coordinator encode no TASK of gated (or
// poison) items before g opens, for one call; the function it returns
// ends that after the call and fails the test if the coordinator gave up
// waiting (the gate never opened). On other ranks it does nothing.
func (e *rankEnv) gateTasks(what string, g *gate) (end func()) {
	if e.rank != 0 {
		return func() {}
	}
	taskGate.Store(g)
	return func() {
		e.t.Helper()
		taskGate.Store(nil)
		if g.late.Load() {
			e.t.Errorf("%s: the root's coordinator waited %v for its gate to open, in vain", what, gateWait)
		}
	}
}

// gated is an int item whose encoding for a TASK first waits for the task
// gate (gateTasks).
type gated int

func (g gated) EncodeMsgpack(enc *msgpack.Encoder) error {
	waitTaskGate()
	return enc.EncodeInt(int64(g))
}

func (g *gated) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt64()
	*g = gated(v)
	return err
}

// gatedItems is items(n) as gated items.
func (e *rankEnv) gatedItems(n int) Maybe[[]gated] {
	if e.rank != 0 {
		return None[[]gated]()
	}
	xs := make([]gated, n)
	for i := range xs {
		xs[i] = gated(i)
	}
	return Some(xs)
}

// traceEvents records pmapTrace events for the duration of f (none
// without the hataoridebug tag, which alone traces).
func traceEvents(f func()) []string {
	var mu sync.Mutex
	var evs []string
	pmapTrace = func(ev string) { mu.Lock(); evs = append(evs, ev); mu.Unlock() }
	defer func() { pmapTrace = nil }()
	f()
	return evs
}

// needTrace skips a test that waits for traced events in a build that
// does not trace (no hataoridebug tag).
func needTrace(t *testing.T) {
	t.Helper()
	if !traceOn {
		t.Skip("reads the coordinator's trace: needs the hataoridebug build tag")
	}
}

func countPrefix(evs []string, prefix string) int {
	n := 0
	for _, ev := range evs {
		if strings.HasPrefix(ev, prefix) {
			n++
		}
	}
	return n
}

// checkReusable shows that the caller's communicator still works after a
// call: a barrier, a tagged ring message of the caller's own, and a
// successful Pmap.
func (e *rankEnv) checkReusable(what string) {
	e.t.Helper()
	if err := e.world.Barrier(); err != nil {
		e.t.Fatalf("%s: barrier: %v", what, err)
	}
	if e.size > 1 {
		next, prev := (e.rank+1)%e.size, (e.rank+e.size-1)%e.size
		msg := []byte(fmt.Sprintf("hello from %d", e.rank))
		buf := make([]byte, 64)
		if e.rank == 0 {
			if err := e.world.Send(msg, next, 42); err != nil {
				e.t.Fatal(err)
			}
		}
		n, err := e.world.Recv(buf, prev, 42)
		if err != nil {
			e.t.Fatalf("%s: recv: %v", what, err)
		}
		if string(buf[:n]) != fmt.Sprintf("hello from %d", prev) {
			e.t.Errorf("%s: ring message %q", what, buf[:n])
		}
		if e.rank != 0 {
			if err := e.world.Send(msg, next, 42); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	out, err := Pmap(context.Background(), e.world, e.dom, Options{Mode: Outer}, e.items(5), func(x int) (int, error) { return -x, nil })
	if err != nil || (e.rank == 0 && !slices.Equal(out, []int{0, -1, -2, -3, -4})) {
		e.t.Errorf("%s: follow-up Pmap: %v %v", what, out, err)
	}
}

// pmapWorld returns the world communicator of an initialised rank.
func pmapWorld(t *testing.T) Comm {
	t.Helper()
	c, err := World()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// poisonV is the value poison cannot decode: far enough into the input
// that its batch is never one the root's slots hold (holdRoot: batches
// among the first slots+1, at most 3 batches of at most 3 items here).
const poisonV = 37

// poison encodes fine, and fails to decode ("poisoned value V") when V is
// poisonV: as a result, on the root; as an item, on the rank that runs it.
// As an item it is gated (see gateTasks) like gated.
type poison struct{ V int }

func (p poison) EncodeMsgpack(enc *msgpack.Encoder) error {
	waitTaskGate()
	return enc.EncodeInt(int64(p.V))
}

func (p *poison) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt64()
	if err != nil {
		return err
	}
	if v == poisonV {
		return fmt.Errorf("poisoned value %d", v)
	}
	p.V = int(v)
	return nil
}
