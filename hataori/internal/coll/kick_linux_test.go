package coll

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestKickSignalEndsWait has signal end a wait that is under way: the wait
// must report that the signal woke it (not a timeout or a stray signal to
// the thread). A signal can land between the waiter's announcement and its
// system call (the wait then returns at once, unwoken), so it tries a few
// times and needs one wake. A signal to the waiter's thread (the
// runtime's preemption) can also end its wait before the test sees it
// waiting: the test then tries again rather than wait for a waiter that
// has gone.
func TestKickSignalEndsWait(t *testing.T) {
	var k Kick
	for range 50 {
		seen := k.Seq()
		woken := make(chan bool, 1)
		go func() { woken <- k.Wait(seen, 10*time.Second) }()
		if !waiting(&k, woken) {
			continue
		}
		time.Sleep(time.Millisecond)
		k.Signal()
		select {
		case w := <-woken:
			if w {
				return
			}
		case <-time.After(5 * time.Second):
			t.Fatal("wait did not end on signal")
		}
	}
	t.Fatal("no wait of 50 reported that signal woke it")
}

// waiting reports once k has a waiter, or false once the wait that woken
// reports on has ended without one being seen.
func waiting(k *Kick, woken <-chan bool) bool {
	for k.waiters.Load() == 0 {
		select {
		case <-woken:
			return false
		case <-time.After(100 * time.Microsecond):
		}
	}
	return true
}

func TestKickSignalBeforeWait(t *testing.T) {
	var k Kick
	seen := k.Seq()
	k.Signal() // between the waiter's check and its wait
	t0 := time.Now()
	k.Wait(seen, 10*time.Second)
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("wait after a signal took %v: the signal was lost", el)
	}
}

// TestKickTimeout checks that a wait with no signal lasts its timeout. A
// signal to the thread (the runtime's preemption, a stop-the-world for
// the collector of a parallel test) ends a wait early, as Wait's contract
// says, so the test waits again until 3 ms have passed: a timeout
// misread (3 µs, or none) would take hundreds of waits, where signals
// account for a few.
func TestKickTimeout(t *testing.T) {
	var k Kick
	seen := k.Seq()
	t0 := time.Now()
	waits := 0
	for time.Since(t0) < 3*time.Millisecond {
		if k.Wait(seen, 3*time.Millisecond) {
			t.Fatal("a wait with no signal reports a wake-up")
		}
		waits++
	}
	if waits > 20 {
		t.Fatalf("%d waits of 3 ms took %v: the timeout is not honoured", waits, time.Since(t0))
	}
}

// TestKickNoLostSignal has a consumer wait for items a producer queues
// with a signal each; every item must be seen with no wait running into
// its (long) timeout.
func TestKickNoLostSignal(t *testing.T) {
	var k Kick
	var mu sync.Mutex
	queued, taken := 0, 0
	const n = 20000
	go func() {
		for range n {
			mu.Lock()
			queued++
			mu.Unlock()
			k.Signal()
		}
	}()
	t0 := time.Now()
	for taken < n {
		seen := k.Seq()
		mu.Lock()
		avail := queued - taken
		taken += avail
		mu.Unlock()
		if avail == 0 {
			k.Wait(seen, 10*time.Second)
		}
		if time.Since(t0) > 5*time.Second {
			t.Fatalf("took %d of %d items in 5 s: a signal was lost", taken, n)
		}
	}
}

// TestKickSignalOneNoLostItem is the remote slots' hand-off (nextJob):
// several consumers wait on one Kick for items a producer queues one at a
// time, each with signalOne, which wakes one waiter only. The producer
// queues the next item only once the last was taken and every consumer
// waits again, so every item needs a wake-up: one that was lost would
// leave the item queued while every consumer sleeps into its (long)
// timeout.
func TestKickSignalOneNoLostItem(t *testing.T) {
	const consumers, n = 3, 2000
	// A raw futex wait keeps its P: leave one for the producer.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(consumers + 1))
	var k Kick
	var queued, taken atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				seen := k.Seq()
				if q := queued.Load(); taken.Load() < q && taken.CompareAndSwap(q-1, q) {
					continue
				}
				k.Wait(seen, 10*time.Second)
			}
		}()
	}
	t0 := time.Now()
	for i := int64(1); i <= n; i++ {
		for k.waiters.Load() < consumers && time.Since(t0) < 5*time.Second {
			runtime.Gosched()
		}
		queued.Store(i)
		k.SignalOne()
		for taken.Load() < i {
			if time.Since(t0) > 5*time.Second {
				stop.Store(true)
				k.Signal()
				wg.Wait()
				t.Fatalf("item %d of %d not taken after 5 s: a wake-up was lost", i, n)
			}
			runtime.Gosched()
		}
	}
	stop.Store(true)
	k.Signal()
	wg.Wait()
}
