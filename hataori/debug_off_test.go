//go:build !hataoridebug && (mpirt || mpicgo)

package hataori

import (
	"sync/atomic"

	"github.com/hataori/hataori-go/internal/sched"
)

// pmapRootStats is never called without the hataoridebug tag; tests that
// set it check what it reports only when traceOn.
var pmapRootStats func(sched.Stats)

// debugTasksSent is 0 without the hataoridebug tag, which alone counts the
// root's TASKs.
func debugTasksSent() int64 { return 0 }

// debugSent never counts without the hataoridebug tag (the test that
// reads it, TestPmapStopCauseOnWay, skips there).
var debugSent atomic.Int64

// debugPlacedCount is -1 without the hataoridebug tag: placed segments
// are counted only with it.
func debugPlacedCount() int64 { return -1 }
