//go:build hataoridebug

package hataori

import (
	"sync/atomic"

	"github.com/hataori/hataori-go/internal/sched"
)

// traceOn enables tracef (the coordinator's events for pmapTrace) in
// builds with the hataoridebug tag only.
const traceOn = true

// Event counters of the root coordinator, kept only in test builds (tag
// hataoridebug), so that multi-rank tests can show by recorded events, not
// by timing, that the coordinator answered other ranks while the root's own
// slots were computing.
var (
	debugTasks   atomic.Int64 // TASKs the root sent to other ranks
	debugResults atomic.Int64 // RESULTs the root received from other ranks
	debugSent    atomic.Int64 // RESULTs another rank started sending to the root
)

// debugPlacedSegs counts the segments other ranks placed in the root's
// grants (pmap_place.go).
var debugPlacedSegs atomic.Int64

func debugPlaced(n int)       { debugPlacedSegs.Add(int64(n)) }
func debugPlacedCount() int64 { return debugPlacedSegs.Load() }
func debugTaskSent()          { debugTasks.Add(1) }
func debugResultReceived()    { debugResults.Add(1) }
func debugResultSent()        { debugSent.Add(1) }

// Waits on a rank with one CPU (docs/ARCHITECTURE.md, "Waiting on a
// shared core"): the root coordinator's sleeps timed by a due RESULT, and
// the remote slots' and coordinator's futex waits on their kicks.
var (
	debugDueSleeps atomic.Int64
	debugKickWaits atomic.Int64
)

func debugDueSleep() { debugDueSleeps.Add(1) }

// The root's bell (pmap_bell.go): the root coordinator's waits on it, and
// another rank's rings of it.
var (
	debugBellWaits atomic.Int64
	debugBellRings atomic.Int64
)

func debugBellWait() { debugBellWaits.Add(1) }
func debugBellRing() { debugBellRings.Add(1) }
func debugKickWait() { debugKickWaits.Add(1) }

// debugPrefetchMax is the most batches a remote rank held beyond its
// running ones (its held TASKs minus its slots) in this process.
var debugPrefetchMax atomic.Int64

func debugPrefetched(n int) {
	for {
		m := debugPrefetchMax.Load()
		if int64(n) <= m || debugPrefetchMax.CompareAndSwap(m, int64(n)) {
			return
		}
	}
}

// pmapRootStats, when set by a test, receives the root scheduler's
// instrumentation at the end of every call.
var pmapRootStats func(sched.Stats)

func debugRootStats(st *sched.Stats) {
	if st != nil && pmapRootStats != nil {
		pmapRootStats(*st)
	}
}
