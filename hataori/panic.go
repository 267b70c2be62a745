package hataori

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// PanicError is the one value every local call re-panics with, on the
// calling goroutine, when a callback panicked: [Map], [MapIn], Domain.Parallel,
// and package lanes (Run, RunWithCoordinator, MapInLanes). Value is the
// callback's original panic value and Stack the stack of the goroutine
// that panicked, taken where it panicked. The re-panic comes only after
// every worker or lane has finished, and the domain or the engines stay
// usable. (In a collective call a panic cannot be re-raised on every rank:
// it aborts the job with [ExitPanic] instead.)
//
// Recover it with
//
//	if pe, ok := recover().(*hataori.PanicError); ok { … pe.Value … }
type PanicError struct {
	// Value is the value the callback passed to panic.
	Value any
	// Stack is the panicking goroutine's stack (runtime/debug.Stack).
	Stack []byte
	// Lane is set by package lanes: the index of the lane whose body
	// panicked, or lanes.CoordinatorLane (-1) for the coordinator. It is 0
	// for the other calls.
	Lane int

	goexit bool // the callback called runtime.Goexit instead of panicking
}

// Error returns the original value and the stack where it panicked.
func (p *PanicError) Error() string {
	return fmt.Sprintf("hataori: callback panicked: %v\n\noriginal stack:\n%s", p.Value, p.Stack)
}

// Unwrap returns Value when it is an error, so errors.Is and errors.As
// reach a panicked error.
func (p *PanicError) Unwrap() error {
	if err, ok := p.Value.(error); ok {
		return err
	}
	return nil
}

// capturePanic turns a recovered value into a *PanicError; call it from the
// deferred function that recovered, so the stack still shows the panic
// site. A recovered *PanicError (a nested call re-panicking) is kept as is.
// r == nil means the goroutine is exiting through runtime.Goexit.
func capturePanic(r any) *PanicError {
	if pe, ok := r.(*PanicError); ok {
		return pe
	}
	if r == nil {
		return &PanicError{Value: "runtime.Goexit called in a callback", Stack: debug.Stack(), goexit: true}
	}
	return &PanicError{Value: r, Stack: debug.Stack()}
}

// repanic re-raises a captured panic on the calling goroutine: a callback
// that called runtime.Goexit (for example through testing.T.FailNow) makes
// the caller exit the same way; any other panic re-panics with p.
func repanic(p *PanicError) {
	if p.goexit {
		runtime.Goexit()
	}
	panic(p)
}
