package lanes

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/hataori/hataori-go/internal/slot"
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

// CoordinatorLane is the Lane value of a PanicError raised by a coordinator.
const CoordinatorLane = -1

// PanicError is the value a run re-panics with on the caller's goroutine when
// a lane body or the coordinator panicked. It is raised only after every lane
// was cancelled and joined. Recover it with a type assertion,
//
//	if pe, ok := recover().(*lanes.PanicError); ok { … pe.Lane, pe.Value … }
//
// to reach the original panic value and the stack on which it was raised. A
// lane body that calls runtime.Goexit (testing.T.FailNow, for example) makes
// the caller's goroutine exit the same way once every lane was joined.
type PanicError struct {
	// Lane is the index of the panicking lane, or CoordinatorLane.
	Lane int
	// Value is the value passed to panic.
	Value any
	// Stack is the stack trace of the panicking goroutine.
	Stack []byte

	goexit bool // the body called runtime.Goexit instead of panicking
}

// Error implements error.
func (p *PanicError) Error() string {
	who := fmt.Sprintf("lane %d", p.Lane)
	if p.Lane == CoordinatorLane {
		who = "coordinator"
	}
	return fmt.Sprintf("lanes: %s panicked: %v\n\n%s", who, p.Value, p.Stack)
}

// Unwrap returns the panic value when it is an error, so that errors.Is and
// errors.As reach it.
func (p *PanicError) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// capturePanic records a recovered value (call it from the deferred function
// that recovered, so the stack shows the panic site). r == nil means the
// goroutine is leaving through runtime.Goexit (for example testing.T.FailNow).
func capturePanic(lane int, r any) *PanicError {
	if r == nil {
		return &PanicError{Lane: lane, Value: "runtime.Goexit called", Stack: debug.Stack(), goexit: true}
	}
	return &PanicError{Lane: lane, Value: r, Stack: debug.Stack()}
}

// raise re-raises a captured panic on the caller: a Goexit as a Goexit, any
// other panic as the *PanicError itself.
func (p *PanicError) raise() {
	if p.goexit {
		runtime.Goexit()
	}
	panic(p)
}

func init() {
	slot.Register(slot.CauseLanesBusy, ErrBusy)
	slot.Register(slot.CauseNoEngine, ErrNoEngine)
}
