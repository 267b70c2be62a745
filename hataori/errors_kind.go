package hataori

import (
	"errors"
	"fmt"
)

// ErrorKind classifies a *PmapError or a *CollectiveError. Every kind has a
// sentinel (ErrReentrant, ErrPreflight, ...) that errors.Is matches against
// either error type of that kind.
type ErrorKind int

// The error kinds. Broadcast, Scatter and Gather report only KindPreflight,
// KindWire and KindProtocol.
const (
	// KindReentrant: a collective call was already active on this rank;
	// reported locally, before any MPI call.
	KindReentrant ErrorKind = iota + 1
	// KindPreflight: an entry check failed. Local entry checks (a domain
	// worker or a goroutine other than the MPI main thread calling) return
	// on that rank alone, before any MPI call; the collective preflight
	// (thread level, root, operation, options, payload, value types, mode,
	// admission, context) returns the lowest failing rank's error on every
	// rank, before any data frame is sent.
	KindPreflight
	// KindUser: a callback returned an error.
	KindUser
	// KindWire: a value failed to encode, or a received frame or payload
	// was malformed or could not be decoded into the receiver's type.
	KindWire
	// KindProtocol: a well-formed message broke the protocol (an
	// unexpected message kind or item count) in a way the ranks could
	// still drain.
	KindProtocol
	// KindCanceled: a rank's context ended during the call (Pmap only).
	KindCanceled
)

// kinds holds each kind's name and sentinel.
var kinds = [...]struct {
	name     string
	sentinel error
}{
	KindReentrant: {"reentrant", ErrReentrant},
	KindPreflight: {"preflight", ErrPreflight},
	KindUser:      {"user", ErrUser},
	KindWire:      {"wire", ErrWire},
	KindProtocol:  {"protocol", ErrProtocol},
	KindCanceled:  {"canceled", ErrCanceled},
}

func (k ErrorKind) valid() bool { return k > 0 && int(k) < len(kinds) }

// String returns the kind's name, for example "user".
func (k ErrorKind) String() string {
	if k.valid() {
		return kinds[k].name
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Sentinels, one per ErrorKind, matched by errors.Is on a *PmapError or
// *CollectiveError of that kind; and causes shared by several kinds.
var (
	// ErrReentrant matches KindReentrant.
	ErrReentrant = errors.New("hataori: collective call already active")
	// ErrPreflight matches KindPreflight.
	ErrPreflight = errors.New("hataori: collective preflight failed")
	// ErrUser matches KindUser.
	ErrUser = errors.New("hataori: callback failed")
	// ErrWire matches KindWire.
	ErrWire = errors.New("hataori: value could not cross ranks")
	// ErrProtocol matches KindProtocol.
	ErrProtocol = errors.New("hataori: protocol violation")
	// ErrCanceled matches KindCanceled; it is also the cause, on every
	// rank, of a preflight failure for a context already done (Pmap and
	// the data collectives).
	ErrCanceled = errors.New("hataori: collective call canceled")
	// ErrNotMainThread is wrapped by the local preflight error of a
	// collective call entered from a goroutine that is not the MPI main
	// thread, and by the collective preflight error of a rank whose
	// MPI_Is_thread_main says so (then on every rank).
	ErrNotMainThread = errors.New("hataori: not the MPI main thread")
)

// is reports whether target is k's sentinel.
func (k ErrorKind) is(target error) bool {
	return k.valid() && kinds[k].sentinel == target
}
