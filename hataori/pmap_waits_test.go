package hataori

import (
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
)

// TestLoopWaitsOnSharedNode checks that the Pmap loops' waits follow the
// node: the longer bounds where the launcher started more ranks than the
// node has CPUs, the short ones elsewhere.
func TestLoopWaitsOnSharedNode(t *testing.T) {
	saved := oversubscribedOnce
	t.Cleanup(func() { oversubscribedOnce = saved })
	for _, shared := range []bool{false, true} {
		oversubscribedOnce = func() bool { return shared }
		want := []time.Duration{0, coll.BusyWait, coll.SlotIdleWait}
		if shared {
			want = []time.Duration{coll.BackoffMaxShared, coll.BusyWaitShared, coll.SlotIdleWaitShared}
		}
		got := []time.Duration{loopBackoffMax(), loopBusyWait(), slotIdleWait()}
		for i, name := range []string{"loopBackoffMax", "loopBusyWait", "slotIdleWait"} {
			if got[i] != want[i] {
				t.Errorf("oversubscribed %v: %s() = %v, want %v", shared, name, got[i], want[i])
			}
		}
	}
	if coll.SlotIdleWaitShared >= coll.ReschedEvery || coll.BusyWaitShared >= coll.ReschedEvery {
		t.Errorf("a shared-node wait (%v, %v) must stay below ReschedEvery (%v)", coll.SlotIdleWaitShared, coll.BusyWaitShared, coll.ReschedEvery)
	}
}
