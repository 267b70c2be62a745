package hataori

import (
	"fmt"
	"sync"
)

// pmapTrace, when set by a test, receives the coordinator's events
// ("open", "send kind=TASK to=1", "recv-result rank=1",
// "root-batch-start", "root-batch-done", …) from the coordinator and the
// root's slots. Only builds with the hataoridebug tag trace (traceOn).
var pmapTrace func(ev string)

// traceMu serialises pmapTrace: the root's slots report their batches
// from their own goroutines.
var traceMu sync.Mutex

// tracef formats one event for pmapTrace. Without the hataoridebug tag
// traceOn is false and tracef's body is dead code: the call is inlined to
// nothing, so its arguments are neither boxed nor allocated on hot paths
// (TestTraceOffAllocatesNothing).
func tracef(format string, args ...any) {
	if traceOn && pmapTrace != nil {
		traceMu.Lock()
		pmapTrace(fmt.Sprintf(format, args...))
		traceMu.Unlock()
	}
}
