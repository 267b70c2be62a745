package seam

import "errors"

// Cause is the number under which the cause of a collective preflight
// failure crosses ranks: the failing rank sends it with its failure code,
// and every rank rebuilds the same sentinel from it, so that errors.Is
// (err, hataori.ErrDomainBusy) or errors.Is(err, lanes.ErrBusy) holds on
// every rank, not only on the rank that failed. The numbers are fixed
// (they are part of the protocol); the sentinels behind them are
// registered at init by the package that owns them (hataori, lanes).
type Cause uint8

// The causes, in the order CauseOf tries them.
const (
	NoCause             Cause = iota
	CauseDomainBusy           // hataori.ErrDomainBusy
	CauseDomainClosed         // hataori.ErrDomainClosed
	CauseWorkerEntry          // hataori.ErrWorkerEntry
	CauseInvalidMode          // hataori.ErrInvalidMode
	CauseNoDomain             // hataori.ErrNoDomain
	CauseNotMainThread        // hataori.ErrNotMainThread
	CauseThreadLevel          // hataori.ErrThreadSupport
	CauseOptionsDiffer        // hataori.ErrOptionsDiffer
	CauseInvalidOptions       // hataori.ErrInvalidOptions
	CausePayload              // hataori.ErrPayload
	CauseCanceled             // hataori.KindCanceled
	CauseLanesBusy            // lanes.ErrBusy
	CauseNoEngine             // lanes.ErrNoEngine
	causeEnd
)

var causes [causeEnd]error

// Register names the sentinel behind c. It is called from init functions
// only, before any collective call.
func Register(c Cause, sentinel error) {
	if c == NoCause || c >= causeEnd {
		panic("slot: Register: cause out of range")
	}
	causes[c] = sentinel
}

// CauseOf returns the first registered cause that err matches (errors.Is),
// or NoCause.
func CauseOf(err error) Cause {
	if err == nil {
		return NoCause
	}
	for c := NoCause + 1; c < causeEnd; c++ {
		if s := causes[c]; s != nil && errors.Is(err, s) {
			return c
		}
	}
	return NoCause
}

// Sentinel returns the sentinel registered for c, or nil (NoCause, an
// unknown number, or a sentinel of a package this binary does not link).
func Sentinel(c Cause) error {
	if c >= causeEnd {
		return nil
	}
	return causes[c]
}
