package lanes

import (
	"errors"
	"fmt"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/internal/seam"
)

// ErrNoEngine is returned by New for an empty engine list: a lane executor
// without an engine could never evaluate an item.
var ErrNoEngine = errors.New("lanes: no engine (at least one engine is required)")

// ErrBusy is returned when a run is started on a Lanes value that is already
// running (from another goroutine, or reentrantly from one of its own lanes
// or its coordinator).
var ErrBusy = errors.New("lanes: lanes already running (a Lanes value runs one run at a time)")

// LaneError reports that a lane body returned an error. When several lanes
// fail, the run reports the lane with the lowest index.
type LaneError struct {
	// Lane is the index of the failing lane (and of its engine).
	Lane int
	// Err is the error the lane body returned.
	Err error
}

// Error implements error.
func (e *LaneError) Error() string {
	return fmt.Sprintf("lanes: lane %d: %v", e.Lane, e.Err)
}

// Unwrap returns the lane body's error.
func (e *LaneError) Unwrap() error { return e.Err }

// CoordinatorError reports that the coordinator returned an error while every
// lane ended cleanly. A lane error takes precedence over it.
type CoordinatorError struct {
	// Err is the error the coordinator returned.
	Err error
}

// Error implements error.
func (e *CoordinatorError) Error() string {
	return fmt.Sprintf("lanes: coordinator: %v", e.Err)
}

// Unwrap returns the coordinator's error.
func (e *CoordinatorError) Unwrap() error { return e.Err }

// CoordinatorLane is the Lane of a *[hataori.PanicError] raised by a coordinator.
const CoordinatorLane = -1

// capturePanic records a recovered value (call it from the deferred function
// that recovered, so the stack shows the panic site) as the one panic type
// of Hataori, *[hataori.PanicError], with its Lane set. r == nil means the
// goroutine is leaving through runtime.Goexit (for example testing.T.FailNow).
func capturePanic(lane int, r any) *hataori.PanicError {
	return seam.CapturePanic(lane, r).(*hataori.PanicError)
}

// raise re-raises a captured panic on the caller: a Goexit as a Goexit, any
// other panic as the *[hataori.PanicError] itself.
func raise(p *hataori.PanicError) { seam.Repanic(p) }

func init() {
	seam.Register(seam.CauseLanesBusy, ErrBusy)
	seam.Register(seam.CauseNoEngine, ErrNoEngine)
}
