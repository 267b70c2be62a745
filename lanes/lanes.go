package lanes

import "sync/atomic"

// Lanes holds the caller's engines, one lane per engine, in the caller's
// order: lane i is always lent engine i. The zero value is not usable; build
// one with New. A Lanes value may be shared between goroutines, but it runs
// one run at a time (see [ErrBusy]).
type Lanes[E any] struct {
	engines []E
	busy    atomic.Bool
}

// New returns lanes over engines, keeping their order. It copies the slice
// (not the engines): E should usually be a pointer type, so that the state an
// engine keeps warm between runs lives in the caller's engine itself. An empty
// list is rejected with [ErrNoEngine].
func New[E any](engines []E) (*Lanes[E], error) {
	if len(engines) == 0 {
		return nil, ErrNoEngine
	}
	return &Lanes[E]{engines: append([]E(nil), engines...)}, nil
}

// Count returns the number of lanes, which is the number of engines (0 for
// a nil *Lanes).
func (l *Lanes[E]) Count() int {
	if l == nil {
		return 0
	}
	return len(l.engines)
}

// Engines returns the engines in lane order (a new slice each call; nil for
// a nil *Lanes).
func (l *Lanes[E]) Engines() []E {
	if l == nil {
		return nil
	}
	return append([]E(nil), l.engines...)
}

// acquire claims the lanes for one run without blocking.
func (l *Lanes[E]) acquire() error {
	if l == nil || len(l.engines) == 0 {
		return ErrNoEngine
	}
	if !l.busy.CompareAndSwap(false, true) {
		return ErrBusy
	}
	return nil
}

func (l *Lanes[E]) releaseBusy() { l.busy.Store(false) }
