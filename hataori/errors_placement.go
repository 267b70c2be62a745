package hataori

import (
	"errors"
	"fmt"
)

// PlacementKind classifies a PlacementError.
type PlacementKind int

// The placement failure kinds.
const (
	// PlacementPreflight: the collective preflight failed on some rank
	// (root out of range or different between ranks, a different operation,
	// a value supplied on the wrong rank, a wrong shard count, a payload that
	// failed to encode or exceeds the wire limit, a value type that cannot
	// cross ranks exactly (also matching ErrUnsupportedType), or a context
	// already done). No data frame was sent.
	PlacementPreflight PlacementKind = iota + 1
	// PlacementWire: a received frame or payload was malformed or could not
	// be decoded into the receiver's type.
	PlacementWire
	// PlacementProtocol: a well-formed frame broke the placement protocol
	// (unexpected message kind or item count).
	PlacementProtocol
)

// String returns "preflight", "wire" or "protocol".
func (k PlacementKind) String() string {
	switch k {
	case PlacementPreflight:
		return "preflight"
	case PlacementWire:
		return "wire"
	case PlacementProtocol:
		return "protocol"
	}
	return fmt.Sprintf("PlacementKind(%d)", int(k))
}

// Sentinels matched by errors.Is against a *PlacementError of the same kind.
var (
	ErrPlacementPreflight = errors.New("hataori: placement preflight failed")
	ErrPlacementWire      = errors.New("hataori: placement wire error")
	ErrPlacementProtocol  = errors.New("hataori: placement protocol error")
)

// PlacementError is the error Broadcast, Scatter and Gather return. It is
// converged collectively: every rank of the call returns an equal
// PlacementError (same Kind, Rank, Op and Message).
type PlacementError struct {
	// Kind classifies the failure.
	Kind PlacementKind
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
// message.
func (e *PlacementError) Error() string {
	if e.Rank < 0 {
		return fmt.Sprintf("hataori: %s %s error on this rank: %s", e.Op, e.Kind, e.Message)
	}
	return fmt.Sprintf("hataori: %s %s error reported by rank %d: %s", e.Op, e.Kind, e.Rank, e.Message)
}

// Unwrap returns the local cause of an entry check that failed on this rank
// alone (for example ErrNotMainThread or ErrWorkerEntry); for a value type
// that cannot cross ranks, an error matching ErrUnsupportedType whose
// message names the type and field; for another preflight failure, on every
// rank, the sentinel of the check that failed (ErrOptionsDiffer,
// ErrInvalidOptions, ErrPayload, ErrCanceled), on the failing rank wrapped
// with its own details; otherwise nil.
func (e *PlacementError) Unwrap() error { return e.err }

// Is reports whether target is the sentinel of e's kind
// (ErrPlacementPreflight, ErrPlacementWire or ErrPlacementProtocol).
func (e *PlacementError) Is(target error) bool {
	switch target {
	case ErrPlacementPreflight:
		return e.Kind == PlacementPreflight
	case ErrPlacementWire:
		return e.Kind == PlacementWire
	case ErrPlacementProtocol:
		return e.Kind == PlacementProtocol
	}
	return false
}
