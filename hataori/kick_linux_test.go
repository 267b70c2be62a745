package hataori

import (
	"sync"
	"testing"
	"time"
)

// TestKickSignalEndsWait has signal end a wait that is under way: the wait
// must report that the signal woke it (not a timeout or a stray signal to
// the thread). A signal can land between the waiter's announcement and its
// system call (the wait then returns at once, unwoken), so it tries a few
// times and needs one wake.
func TestKickSignalEndsWait(t *testing.T) {
	var k kick
	for range 50 {
		seen := k.seq()
		woken := make(chan bool)
		go func() { woken <- k.wait(seen, 10*time.Second) }()
		for k.waiters.Load() == 0 {
			time.Sleep(100 * time.Microsecond)
		}
		time.Sleep(time.Millisecond)
		k.signal()
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

func TestKickSignalBeforeWait(t *testing.T) {
	var k kick
	seen := k.seq()
	k.signal() // between the waiter's check and its wait
	t0 := time.Now()
	k.wait(seen, 10*time.Second)
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("wait after a signal took %v: the signal was lost", el)
	}
}

func TestKickTimeout(t *testing.T) {
	var k kick
	t0 := time.Now()
	k.wait(k.seq(), 3*time.Millisecond)
	if el := time.Since(t0); el < 2*time.Millisecond {
		t.Fatalf("wait without a signal returned after %v, want about 3 ms", el)
	}
}

// TestKickNoLostSignal has a consumer wait for items a producer queues
// with a signal each; every item must be seen with no wait running into
// its (long) timeout.
func TestKickNoLostSignal(t *testing.T) {
	var k kick
	var mu sync.Mutex
	queued, taken := 0, 0
	const n = 20000
	go func() {
		for range n {
			mu.Lock()
			queued++
			mu.Unlock()
			k.signal()
		}
	}()
	t0 := time.Now()
	for taken < n {
		seen := k.seq()
		mu.Lock()
		avail := queued - taken
		taken += avail
		mu.Unlock()
		if avail == 0 {
			k.wait(seen, 10*time.Second)
		}
		if time.Since(t0) > 5*time.Second {
			t.Fatalf("took %d of %d items in 5 s: a signal was lost", taken, n)
		}
	}
}
