package hataori

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
	"github.com/hataori/hataori-go/internal/seam"
)

// run runs this rank's side of a call whose preflight passed; slots is
// this rank's slot count and start hands the slots their loop (nil: none).
func (c *call[T, U]) run(slots int, start func(serve func(int))) {
	if c.k.Rank != c.root {
		if !c.alone {
			runRemote(c, slots, start)
		}
		return
	}
	if c.alone {
		// No other rank sends anything: the root's inline slot, and one
		// slot for each other rank, which settleAlone stops and drains.
		counts := make([]int, c.k.Size)
		for r := range counts {
			counts[r] = 1
		}
		c.out = runRoot(c, counts, nil, start)
		return
	}
	counts, pending := collectSlots(c.k, slots)
	c.out = runRoot(c, counts, pending, start)
}

// stopRule is how this rank's running batches stop (see evalBatch):
// under FailFast before their first item above the lowest failing index
// known (c.low) or once the caller's ctx ends, under CollectAll once the
// callbacks' context ends. Valid once cctx exists.
func (c *call[T, U]) stopRule() stopRule {
	if c.collect {
		return stopRule{halt: c.cctx.Done()}
	}
	return stopRule{onError: true, halt: c.ctx.Done(), low: c.low}
}

// failAt notes, under FailFast, a failure with task key key on this rank
// (a failing item's index, or the first index of a batch whose frame
// failed as a whole): every running batch of the rank stops before its
// first item above it, since none of them can win over it. Under
// CollectAll failures stop nothing. Any goroutine.
func (c *call[T, U]) failAt(key int64) {
	if !c.collect && key >= 0 {
		c.low.lower(key)
	}
}

// haltAll notes a call-level stop (a context that ended, a failure no
// index names) on this rank: under FailFast every running batch stops
// before its next item (under CollectAll the callbacks' context, which
// the stop cancels, does the same). Any goroutine.
func (c *call[T, U]) haltAll() { c.low.lower(haltAll) }

// pendingReady is a first READY the root received while learning the
// ranks' slot counts, answered once the scheduler exists.
type pendingReady struct {
	rank         int
	status       uint8
	prefetchSlot bool // the rank's last logical slot is its prefetch slot (readyPrefetchSlot)
}

// collectSlots receives every other rank's first READY (slot 0), which
// carries that rank's slot count, and returns the counts of all ranks (the
// root's own is rootSlots) with those READYs, still to be answered. The
// other ranks send it as their first message after the preflight, so the
// root waits for one message latency at most.
func collectSlots(k *coll.Coll, rootSlots int) ([]int, []pendingReady) {
	counts := make([]int, k.Size)
	counts[k.Rank] = rootSlots
	var pending []pendingReady
	for r := range k.Size {
		if r == k.Rank {
			continue
		}
		h, _, _, err := k.AwaitFrame(r, tagPmap)
		if err != nil {
			k.AbortProtocol(fmt.Sprintf("first READY from rank %d: %v", r, err))
		}
		if h.Kind != wire.KindReady || h.Slot != 0 || h.Count < 1 {
			k.AbortProtocol(fmt.Sprintf("first message from rank %d: %v slot %d announcing %d slots", r, h.Kind, h.Slot, h.Count))
		}
		counts[r] = int(h.Count)
		pending = append(pending, pendingReady{rank: r, status: h.Status &^ readyPrefetchSlot, prefetchSlot: h.Status&readyPrefetchSlot != 0})
	}
	return counts, pending
}

// slotStart holds a call's slots until the preflight has passed: each slot
// runs work, which waits for start and then runs the serve loop it was
// given, or returns at once when there is none (the preflight failed, or
// the coordinator runs the batches itself).
type slotStart struct {
	once  sync.Once
	ready chan struct{}
	serve func(int)
}

func newSlotStart() *slotStart { return &slotStart{ready: make(chan struct{})} }

func (s *slotStart) start(serve func(int)) {
	s.once.Do(func() {
		s.serve = serve
		close(s.ready)
	})
}

func (s *slotStart) work(slot int) {
	<-s.ready
	if s.serve != nil {
		s.serve(slot)
	}
}

// keepCoordinatorResponsive makes room for the coordinator for the duration
// of a call whose callbacks run off the calling goroutine. GOMAXPROCS is
// raised at once to the executor's computing goroutines plus one if it is
// lower (so the coordinator never waits for a P behind busy workers: under
// mpirun a rank bound to one core starts with GOMAXPROCS 1), and the
// function it returns restores it (restoreGOMAXPROCS); a call that finds
// it high enough changes nothing.
//
// On a node whose launcher started more ranks than it has CPUs
// (nodeOversubscribed, looked at once per process) it is raised to one
// more, a P left idle while every slot computes, and left there for the
// rest of the process. There the coordinator is often taken off its core
// in the middle of an MPI call, and the runtime's sysmon takes the P of a
// goroutine that has spent a tick (20 µs) in a system call (an MPI call
// is a cgo call) when no other P is idle; every P it takes sets it polling
// every 20 µs again (see coll.Resched), and each of those wake-ups
// preempts a slot. The raise is not undone because every GOMAXPROCS change
// stops the world, and there a stop waits for threads that wait for a
// core: 13–112 ms measured under MPICH with 4 ranks on 2 cores, while the
// rank's coordinator and slots stand still. Elsewhere the spare costs more
// than it saves (2 ranks on one core each, 2 µs items: 0.78 of ideal with
// it, 0.82 without). (The coordinator's fine timer slack comes with the
// collective call itself: enterCollective.)
func keepCoordinatorResponsive(exec seam.Executor) (restore func()) {
	if !exec.Offloads() {
		return func() {}
	}
	old := runtime.GOMAXPROCS(0)
	need := exec.Threads() + 1
	if spareWanted() {
		if old < need+1 {
			runtime.GOMAXPROCS(need + 1)
		}
		return func() {}
	}
	if old >= need {
		return func() {}
	}
	runtime.GOMAXPROCS(need)
	return func() { restoreGOMAXPROCS(old) }
}

// remoteInline says whether a rank other than the root runs its callbacks
// on its coordinator, between messages, as under MPI_THREAD_SINGLE,
// instead of on a helper thread: MPI-only (exec is the helper), the
// caller's callback takes no context (Pmap's: nothing needs cancelling
// under it, and the coordinator looks for the root's CANCEL between
// items), no forced Prefetch, on a node whose launcher started more ranks
// than it has CPUs (inlineWanted). There every batch on a helper costs
// two hand-offs between the coordinator and the helper, each a context
// switch on a core the ranks share, and the coordinator's timed waits
// while the helper computes; what the helper buys, the next TASK
// travelling while a batch runs, is worth little when the rank's share of
// the cores goes to the other ranks while it waits.
func remoteInline(exec seam.Executor, remote, prefetch, plain bool) bool {
	h, ok := exec.(helperExec)
	return ok && !h.inline && remote && !prefetch && plain && inlineWanted()
}

// inlineWanted says whether a node's MPI-only ranks run their callbacks
// inline (remoteInline); a variable for the tests.
var inlineWanted = oversubscribedOnce

// spareWanted says whether a call gets the idle P; a variable for the tests.
var spareWanted = oversubscribedOnce

// onSharedNode is shared on a node whose launcher started more ranks than
// it has CPUs (oversubscribedOnce), else alone.
func onSharedNode(shared, alone time.Duration) time.Duration {
	if oversubscribedOnce() {
		return shared
	}
	return alone
}

// loopBackoffMax is the longest idle sleep of the Pmap coordinators' loops
// (0: coll.BackoffMax).
func loopBackoffMax() time.Duration { return onSharedNode(coll.BackoffMaxShared, 0) }

// loopBusyWait is the longest wait of a remote coordinator whose every
// logical slot holds a batch.
func loopBusyWait() time.Duration { return onSharedNode(coll.BusyWaitShared, coll.BusyWait) }

// slotIdleWait bounds one wait of an idle remote slot for its next TASK.
func slotIdleWait() time.Duration { return onSharedNode(coll.SlotIdleWaitShared, coll.SlotIdleWait) }

// restoreGOMAXPROCS sets GOMAXPROCS back to old without leaving the
// runtime's automatic updates (Go 1.25 on: GOMAXPROCS follows the CPU
// affinity and the cgroup CPU limit) switched off, as runtime.GOMAXPROCS(n)
// alone would for the rest of the process: it returns to the runtime's
// default, which turns them back on, and sets old explicitly only when
// the default differs from it (old was then set by the program or by the
// GOMAXPROCS environment variable, and the automatic updates were off
// already). A program that set GOMAXPROCS to exactly the default value
// gets the automatic updates back.
func restoreGOMAXPROCS(old int) {
	runtime.SetDefaultGOMAXPROCS()
	if runtime.GOMAXPROCS(0) != old {
		runtime.GOMAXPROCS(old)
	}
}
