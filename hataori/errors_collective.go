package hataori

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PmapError is the error of a collective [Pmap], [PmapContext] or
// lanes.PmapLanes call. Except for the local entry checks ([KindReentrant],
// and [KindPreflight] with Rank -1), every rank of the call returns an
// identical PmapError: the same Kind, Index, Key, Rank, Message and
// Failures.
//
// errors.Is(err, e.Kind) holds on every rank (test with the [ErrorKind]
// constants). A preflight error also unwraps, on every rank, to the cause
// of the check that failed ([ErrDomainBusy], [ErrNotMainThread],
// [ErrOptionsDiffer], [ErrUnsupportedType], lanes.ErrBusy, …; see
// [ErrThreadSupport]). On the rank that reported any other error, the
// original error (the callback's error, a wire or context error,
// context.Cause included) stays reachable through Unwrap; other ranks know
// only its message. So code that must take the same branch on every rank
// branches on Hataori's sentinels and the fields, never on the callback's
// own errors or a context's cause.
type PmapError struct {
	// Kind classifies the failure.
	Kind ErrorKind
	// Index is the input index of the failing item (for an item or result
	// that could not be encoded or decoded, the item itself, not its
	// batch's first index), or -1 for an error that is not about one item:
	// a preflight or local error, a context that ended, a frame that did
	// not parse.
	Index int
	// Key is an opaque ordering key: of the errors reported during a call,
	// the one with the lowest key wins, the same on every rank, whatever
	// the schedule. It is -1 for preflight and local errors. Compare keys
	// of one call only; their values are not part of the API.
	Key int64
	// Rank is the rank that reported the error (the lowest failing rank
	// for a collective preflight error), or -1 for a local error.
	Rank int
	// Message is the reporting rank's message, bounded to 4096 bytes at a
	// UTF-8 boundary.
	Message string
	// Failures lists, under [CollectAll], every item that has no result,
	// in index order, identically on every rank; under [FailFast] it is
	// nil.
	Failures []ItemFailure
	err      error
}

// Error returns "hataori: pmap <kind> error (item I, rank R, key K):
// message", leaving out what does not apply, with the number of failed
// items under CollectAll. The message is shown without the "hataori: "
// tags of the errors it was composed from, and without a leading
// "rank R: " that repeats the rank, so the text names Hataori and the
// rank once.
func (e *PmapError) Error() string {
	s := fmt.Sprintf("hataori: pmap %v error", e.Kind)
	var at []string
	if e.Index >= 0 {
		at = append(at, fmt.Sprintf("item %d", e.Index))
	}
	if e.Rank >= 0 {
		at = append(at, fmt.Sprintf("rank %d", e.Rank))
		if e.Key >= 0 {
			at = append(at, fmt.Sprintf("key %d", e.Key))
		}
	}
	if len(at) > 0 {
		s += " (" + strings.Join(at, ", ") + ")"
	}
	s += ": " + untag(unrank(e.Message, e.Rank))
	if n := len(e.Failures); n > 0 {
		s += fmt.Sprintf(" [%d items without a result]", n)
	}
	return s
}

// Unwrap returns the original error on the rank that reported it, the
// agreed cause of a preflight error on every rank, else nil.
func (e *PmapError) Unwrap() error { return e.err }

// unrank returns msg without a leading "rank <rank>: ": the messages the
// ranks report name their rank, and the Error texts name it already.
func unrank(msg string, rank int) string {
	if rank < 0 {
		return msg
	}
	return strings.TrimPrefix(msg, "rank "+strconv.Itoa(rank)+": ")
}

// errTag starts the text of Hataori's own errors (its sentinels, MPIError,
// MapError, …).
const errTag = "hataori: "

// untag returns msg without the errTag that starts it or any error
// wrapped in it (after ": "): a PmapError's or CollectiveError's message
// is often such an error's text ("rank 1: executor admission: hataori:
// domain is busy"), and the Error text starts with the tag already.
func untag(msg string) string {
	const wrapped = ": " + errTag
	for strings.HasPrefix(msg, errTag) {
		msg = msg[len(errTag):]
	}
	if !strings.Contains(msg, wrapped) {
		return msg
	}
	var b strings.Builder
	b.Grow(len(msg))
	for {
		i := strings.Index(msg, wrapped)
		if i < 0 {
			break
		}
		b.WriteString(msg[:i+2])
		msg = msg[i+2:]
		for strings.HasPrefix(msg, errTag) {
			msg = msg[len(errTag):]
		}
	}
	b.WriteString(msg)
	return b.String()
}

// Is reports whether target is e.Kind.
func (e *PmapError) Is(target error) bool {
	return e.Kind.is(target)
}

// Failed reports whether item i is in e.Failures (so that, under
// CollectAll, the root's result i is the zero value); a binary search.
func (e *PmapError) Failed(i int) bool {
	_, ok := slices.BinarySearchFunc(e.Failures, i, func(f ItemFailure, i int) int { return cmp.Compare(f.Index, i) })
	return ok
}

// ItemFailure is one item without a result in a [CollectAll] call: the
// same on every rank (see [PmapError].Failures).
type ItemFailure struct {
	// Index is the item's input index.
	Index int
	// Kind is KindUser for a callback error, KindWire for an item or
	// result that could not be encoded or decoded (the other items that
	// travelled in the same frame fail with it), and the call-level
	// error's kind (KindCanceled, for example) for an item that never
	// ran or whose result was lost because the call stopped early.
	Kind ErrorKind
	// Rank is the rank that reported it, -1 for an item the call did not
	// finish.
	Rank int
	// Message is the error's message, bounded to 4096 bytes.
	Message string
	err     error
}

// Error returns "item I (rank R): message", a line of a PmapError's list,
// without a leading "rank R: " of the message that repeats the rank.
func (f ItemFailure) Error() string {
	if f.Rank < 0 {
		return fmt.Sprintf("item %d: %s", f.Index, f.Message)
	}
	return fmt.Sprintf("item %d (rank %d): %s", f.Index, f.Rank, unrank(f.Message, f.Rank))
}

// Unwrap returns the original error on the rank that reported it, else nil.
func (f ItemFailure) Unwrap() error { return f.err }

// CollectiveError is the error [Broadcast], [Scatter] and [Gather] return.
// It is converged collectively: every rank of the call returns an equal
// CollectiveError (same Kind, Rank, Op and Message), except for a local
// entry check (Rank -1). errors.Is(err, e.Kind) holds on every rank.
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
// it was composed from and without a leading "rank R: " that repeats the
// rank, so the text names Hataori and the rank once.
func (e *CollectiveError) Error() string {
	if e.Rank < 0 {
		return fmt.Sprintf("hataori: %s %s error on this rank: %s", e.Op, e.Kind, untag(e.Message))
	}
	return fmt.Sprintf("hataori: %s %s error reported by rank %d: %s", e.Op, e.Kind, e.Rank, untag(unrank(e.Message, e.Rank)))
}

// Unwrap returns the local cause of an entry check that failed on this rank
// alone (for example [ErrNotMainThread] or [ErrWorkerEntry]); for a value
// type that cannot cross ranks, an error matching [ErrUnsupportedType]
// whose message names the type and field; for another preflight failure,
// on every rank, the sentinel of the check that failed
// ([ErrOptionsDiffer], [ErrInvalidOptions], [ErrPayload], [KindCanceled]),
// on the failing rank wrapped with its own details; otherwise nil.
func (e *CollectiveError) Unwrap() error { return e.err }

// Is reports whether target is e.Kind ([KindPreflight], [KindWire] or
// [KindProtocol]).
func (e *CollectiveError) Is(target error) bool { return e.Kind.is(target) }
