package hataori

import (
	"fmt"
)

// CollectiveError is the error Broadcast, Scatter and Gather return. It is
// converged collectively: every rank of the call returns an equal
// CollectiveError (same Kind, Rank, Op and Message).
type CollectiveError struct {
	// Kind classifies the failure.
	Kind ErrorKind
	// Rank is the lowest rank that reported a failure; the message is its.
	Rank int
	// Op is the operation: "Broadcast", "Scatter" or "Gather".
	Op string
	// Message describes the failure, at most 4096 bytes of UTF-8.
	Message string
	// err is the local cause of an entry check that failed on this rank
	// alone (Rank -1), or the agreed cause of a preflight failure (the
	// type-check failure, equal on every rank; the sentinel of the failed
	// check, rebuilt on every rank), or nil.
	err error
}

// Error returns a one-line description naming the operation, kind, rank and
// message; the message is shown without the "hataori: " tags of the errors
// it was composed from, so the text names Hataori once.
func (e *CollectiveError) Error() string {
	if e.Rank < 0 {
		return fmt.Sprintf("hataori: %s %s error on this rank: %s", e.Op, e.Kind, untag(e.Message))
	}
	return fmt.Sprintf("hataori: %s %s error reported by rank %d: %s", e.Op, e.Kind, e.Rank, untag(e.Message))
}

// Unwrap returns the local cause of an entry check that failed on this rank
// alone (for example ErrNotMainThread or ErrWorkerEntry); for a value type
// that cannot cross ranks, an error matching ErrUnsupportedType whose
// message names the type and field; for another preflight failure, on every
// rank, the sentinel of the check that failed (ErrOptionsDiffer,
// ErrInvalidOptions, ErrPayload, ErrCanceled), on the failing rank wrapped
// with its own details; otherwise nil.
func (e *CollectiveError) Unwrap() error { return e.err }

// Is reports whether target is the sentinel of e's kind (ErrPreflight,
// ErrWire or ErrProtocol).
func (e *CollectiveError) Is(target error) bool { return e.Kind.is(target) }
