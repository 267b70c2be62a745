//go:build !hataoridebug

package hataori

import "github.com/hataori/hataori-go/internal/sched"

// Without the hataoridebug tag the coordinator records no events and
// traces nothing.

// traceOn is false: tracef and its arguments compile to nothing.
const traceOn = false

func debugTaskSent()              {}
func debugPlaced(int)             {}
func debugResultReceived()        {}
func debugResultSent()            {}
func debugPrefetched(int)         {}
func debugBellWait()              {}
func debugBellRing()              {}
func debugDueSleep()              {}
func debugKickWait()              {}
func debugRootStats(*sched.Stats) {}
