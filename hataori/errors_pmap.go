package hataori

import (
	"errors"
	"fmt"
)

// PmapErrorKind classifies a *PmapError.
type PmapErrorKind int

// The kinds of PmapError.
const (
	// KindReentrant: a collective call was already active on this rank;
	// reported locally, before any MPI call.
	KindReentrant PmapErrorKind = iota + 1
	// KindPreflight: an entry check failed. Local entry checks (a domain
	// worker or a goroutine other than the MPI main thread calling) return
	// on that rank alone, before any MPI call; the collective preflight
	// (thread level, root, options, payload, mode, admission, context)
	// returns the lowest failing rank's error on every rank.
	KindPreflight
	// KindUser: a callback returned an error.
	KindUser
	// KindWire: a value failed to encode or decode.
	KindWire
	// KindProtocol: a scheduler message broke the protocol in a way the
	// ranks could still drain.
	KindProtocol
	// KindCanceled: a rank's context ended during the call.
	KindCanceled
)

var kindNamesPmap = [...]string{
	KindReentrant: "reentrant",
	KindPreflight: "preflight",
	KindUser:      "user",
	KindWire:      "wire",
	KindProtocol:  "protocol",
	KindCanceled:  "canceled",
}

// String returns the kind's name, for example "user".
func (k PmapErrorKind) String() string {
	if k > 0 && int(k) < len(kindNamesPmap) {
		return kindNamesPmap[k]
	}
	return fmt.Sprintf("PmapErrorKind(%d)", int(k))
}

// Sentinels matched by errors.Is on a *PmapError of the corresponding kind.
var (
	// ErrReentrant matches KindReentrant.
	ErrReentrant = errors.New("hataori: collective call already active")
	// ErrPreflight matches KindPreflight.
	ErrPreflight = errors.New("hataori: collective preflight failed")
	// ErrUser matches KindUser.
	ErrUser = errors.New("hataori: callback failed")
	// ErrWire matches KindWire.
	ErrWire = errors.New("hataori: wire encoding failed")
	// ErrProtocol matches KindProtocol.
	ErrProtocol = errors.New("hataori: scheduler protocol violation")
	// ErrCanceled matches KindCanceled.
	ErrCanceled = errors.New("hataori: collective call canceled")
	// ErrNotMainThread is wrapped by the local preflight error of a Pmap
	// entered from a goroutine that is not the MPI main thread.
	ErrNotMainThread = errors.New("hataori: not the MPI main thread")
)

var kindSentinels = [...]error{
	KindReentrant: ErrReentrant,
	KindPreflight: ErrPreflight,
	KindUser:      ErrUser,
	KindWire:      ErrWire,
	KindProtocol:  ErrProtocol,
	KindCanceled:  ErrCanceled,
}

// PmapError is the error of a collective Pmap. Except for the local entry
// checks (KindReentrant, and KindPreflight with Key -1 and Rank -1), every
// rank of the call returns an identical PmapError: the same Kind, Key,
// Rank and Message.
//
// Key is the deterministic error key that won the final convergence,
// ((taskKey*3 + class)*worldSize + Rank), where taskKey is the failing
// input index (or the input length for call-level errors such as a
// cancelled context) and class is 0 for wire/protocol, 1 for callback and
// 2 for call-level errors; the lowest key wins. It is -1 for preflight and
// local errors. Rank is the rank that reported the error (the lowest
// failing rank for a collective preflight error, -1 for local errors), and
// Message its message, bounded to 4096 bytes at a UTF-8 boundary.
//
// On the reporting rank the original error (the callback's error, a wire
// or context error) stays reachable through Unwrap; errors.Is also matches
// the kind's sentinel (ErrUser, ErrPreflight, …) on every rank.
type PmapError struct {
	Kind    PmapErrorKind
	Key     int64
	Rank    int
	Message string
	err     error
}

// Error returns "hataori: pmap <kind> error (rank R[, key K]): message".
func (e *PmapError) Error() string {
	s := fmt.Sprintf("hataori: pmap %v error", e.Kind)
	switch {
	case e.Rank >= 0 && e.Key >= 0:
		s += fmt.Sprintf(" (rank %d, key %d)", e.Rank, e.Key)
	case e.Rank >= 0:
		s += fmt.Sprintf(" (rank %d)", e.Rank)
	}
	return s + ": " + e.Message
}

// Unwrap returns the original error on the rank that reported it, else nil.
func (e *PmapError) Unwrap() error { return e.err }

// Is reports whether target is the sentinel of e's kind.
func (e *PmapError) Is(target error) bool {
	return int(e.Kind) > 0 && int(e.Kind) < len(kindSentinels) && kindSentinels[e.Kind] == target
}
