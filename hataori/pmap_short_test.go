package hataori

import (
	"testing"
	"time"

	"github.com/hataori/hataori-go/internal/sched"
)

// TestTakeShort checks the short path's rule on remembered costs: nothing
// remembered, the root's input length times the cost per item against the
// budget, another rank's whole previous cost, a stream's root, a root that
// ran no item, and the memo's bound.
func TestTakeShort(t *testing.T) {
	shortMemo.m = nil
	defer func() { shortMemo.m = nil }()
	key := shortKey{comm: 7, fn: 1, root: 0}
	// note remembers work over items: the root's cost per item, another
	// rank's whole callback time (items 0: the root measured none).
	note := func(k shortKey, work time.Duration, items int) {
		c := shortCost{work: work, measured: items > 0}
		if items > 0 {
			c.perItem = work / time.Duration(items)
		}
		noteShort(k, c)
	}
	if takeShort(key, true, 1) || takeShort(key, false, 0) {
		t.Fatal("short path with nothing remembered")
	}
	note(key, 100*time.Microsecond, 10) // 10 µs per item
	for _, c := range []struct {
		root bool
		n    int
		want bool
	}{
		{true, 25, true},   // 250 µs: at the budget
		{true, 26, false},  // 260 µs
		{true, -1, false},  // a stream's root
		{false, 0, true},   // another rank: 100 µs last time
		{false, 1e6, true}, // (a remote does not know the length)
	} {
		if got := takeShort(key, c.root, c.n); got != c.want {
			t.Errorf("root=%v n=%d: %v, want %v", c.root, c.n, got, c.want)
		}
	}
	note(key, shortWork+1, 3)
	if takeShort(key, false, 0) {
		t.Error("a remote whose last call cost more than the budget takes the short path")
	}
	note(key, 0, 0)
	if takeShort(key, true, 1) || !takeShort(key, false, 0) {
		t.Error("a rank that ran no item: the root cannot price an item, another rank's share was nothing")
	}
	if takeShort(shortKey{comm: 7, root: 0}, false, 0) {
		t.Error("short path without a callback code")
	}
	old := shortWork
	shortWork = 0
	if takeShort(key, false, 0) {
		t.Error("short path with a budget of 0")
	}
	shortWork = old
	for i := range shortMemoMax {
		note(shortKey{comm: 8, fn: uintptr(i + 2)}, 0, 1)
	}
	if len(shortMemo.m) > shortMemoMax {
		t.Errorf("memo holds %d keys, bound %d", len(shortMemo.m), shortMemoMax)
	}
	if takeShort(key, false, 0) {
		t.Error("the memo outgrew its bound without forgetting")
	}
}

// TestFuncCode checks the short path's key of a callback: zero for nil,
// one per function literal (as a loop of calls passes it), whatever it
// captures. (A literal inside a function that the compiler inlines is
// copied per call site: each copy has its own code.)
func TestFuncCode(t *testing.T) {
	var nilF func(int) (int, error)
	if funcCode(nilF) != 0 || funcCode(nil) != 0 {
		t.Error("nil callback has a code")
	}
	var codes []uintptr
	for k := range 3 {
		codes = append(codes, funcCode(func(x int) (int, error) { return x + k, nil }))
	}
	other := func(x int) (int, error) { return x, nil }
	if codes[0] != codes[1] || codes[1] != codes[2] || codes[0] == 0 {
		t.Errorf("closures of one literal differ: %x", codes)
	}
	if codes[0] == funcCode(other) {
		t.Error("two literals share a code")
	}
}

// TestShortCosts checks where a call's cost comes from: the root's
// scheduler estimate of its own cost per item (none when it measured no
// batch), another rank's slots' busy time summed.
func TestShortCosts(t *testing.T) {
	st := &sched.Stats{Estimates: []sched.Estimate{{}, {Measured: 3, ItemCost: 7 * time.Microsecond}}}
	if c := rootCost(st, 1); !c.measured || c.perItem != 7*time.Microsecond {
		t.Errorf("root 1: %+v, want 7 µs per item, measured", c)
	}
	if c := rootCost(st, 0); c.measured {
		t.Errorf("root 0 measured nothing: %+v", c)
	}
	if c := remoteCost([]slotMeter{{busy: 40 * time.Microsecond}, {busy: 2 * time.Microsecond}}); c.work != 42*time.Microsecond {
		t.Errorf("remote: %+v, want 42 µs of work", c)
	}
}
