//go:build hataoridebug

package hataori

import "sync/atomic"

// Event counters of the root coordinator, kept only in test builds (tag
// hataoridebug), so that multi-rank tests can show by recorded events, not
// by timing, that the coordinator answered other ranks while the root's own
// slots were computing.
var (
	debugTasks   atomic.Int64 // TASKs the root sent to other ranks
	debugResults atomic.Int64 // RESULTs the root received from other ranks
)

func debugTaskSent()       { debugTasks.Add(1) }
func debugResultReceived() { debugResults.Add(1) }
