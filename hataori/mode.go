package hataori

import "strconv"

// LocalMode selects how [MapIn] (and a domain's Executor) spreads items over
// the workers of a [Domain]. The zero value is [Sequential].
type LocalMode int

const (
	// Sequential runs the items one after another on one worker of the
	// domain, with no fan-out, and stops after the first failing item.
	Sequential LocalMode = iota
	// Outer evaluates every item exactly once, spread over all the
	// domain's workers, keeps the input order in the results and reports
	// the lowest failing index after every item has been evaluated. An
	// item must not start competing parallel work of its own.
	Outer
	// Inner runs the items one after another, lending the whole domain to
	// each: the callback reaches the domain's workers through
	// Domain.Parallel, and nothing else may use them meanwhile. It stops
	// after the first failing item.
	Inner
)

// String returns the mode's name ("Sequential", "Outer" or "Inner").
func (m LocalMode) String() string {
	switch m {
	case Sequential:
		return "Sequential"
	case Outer:
		return "Outer"
	case Inner:
		return "Inner"
	}
	return "LocalMode(" + strconv.Itoa(int(m)) + ")"
}

func (m LocalMode) valid() bool { return m >= Sequential && m <= Inner }
