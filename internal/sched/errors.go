package sched

import (
	"errors"
	"fmt"
)

// Sentinels wrapped by *Error.
var (
	// ErrProtocol marks a transition that the protocol does not allow in
	// the current state (wrong slot or rank state, batch id, count or
	// indices, an invalid rank or slot number).
	ErrProtocol = errors.New("scheduler protocol violation")
	// ErrOverflow marks an integer (batch id, error key) that would overflow.
	ErrOverflow = errors.New("scheduler integer overflow")
	// ErrConfig marks an invalid Config or key argument.
	ErrConfig = errors.New("invalid scheduler configuration")
)

// Error is a typed scheduler error. It names the transition (Op) and the
// rank involved (-1 when none), and wraps one of the package sentinels.
// When a single slot of the rank is involved, Msg starts with "slot N: ".
type Error struct {
	Op   string
	Rank int
	Msg  string
	Err  error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Rank >= 0 {
		return fmt.Sprintf("sched: %s (rank %d): %s: %v", e.Op, e.Rank, e.Msg, e.Err)
	}
	return fmt.Sprintf("sched: %s: %s: %v", e.Op, e.Msg, e.Err)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func protoErr(op string, rank int, format string, args ...any) error {
	return &Error{Op: op, Rank: rank, Msg: fmt.Sprintf(format, args...), Err: ErrProtocol}
}

func slotErr(op string, rank, slot int, format string, args ...any) error {
	return &Error{Op: op, Rank: rank, Msg: fmt.Sprintf("slot %d: ", slot) + fmt.Sprintf(format, args...), Err: ErrProtocol}
}
