package hataori

import "errors"

// When a collective call may keep its private communicator for the next
// call on the same parent (coll.Kept has the isolation argument). Both
// decisions read only the call's converged error, which every rank returns
// identically, so every rank keeps or frees alike.

// pmapReusable reports whether a Pmap call that passed its preflight and
// converged to err left no frame in flight: its drain ran to the end
// (success, item failures, a cancellation). A wire or protocol fault may
// have stopped reading a frame half-way: the duplicate is freed.
func pmapReusable(err error) bool {
	var pe *PmapError
	if err == nil {
		return true
	}
	if !errors.As(err, &pe) {
		return false
	}
	return pe.Kind == KindUser || pe.Kind == KindCanceled
}

// dataReusable reports the same for a data collective (or any call) that
// returned err: success, or a preflight failure (no frame was sent).
func dataReusable(err error) bool {
	var pe *PmapError
	var ce *CollectiveError
	switch {
	case err == nil:
		return true
	case errors.As(err, &ce):
		return ce.Kind == KindPreflight
	case errors.As(err, &pe):
		return pe.Kind == KindPreflight
	}
	return false
}
