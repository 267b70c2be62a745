package hataori

import (
	"errors"
	"strconv"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
)

// Sentinel errors of the local calls (MapIn, Domain.Parallel, Domain.Close
// and a domain's Executor). MapIn checks them before any callback runs, in
// the order ErrInvalidMode, ErrNoDomain, ErrDomainClosed, ErrWorkerEntry,
// ErrDomainBusy. Test with errors.Is.
var (
	// ErrInvalidMode reports a LocalMode other than Sequential, Outer or
	// Inner.
	ErrInvalidMode = errors.New("hataori: invalid local mode")
	// ErrNoDomain reports a nil *Domain, or a zero Domain (one not made by
	// NewDomain or NewLocalDomain).
	ErrNoDomain = errors.New("hataori: no domain")
	// ErrNilCallback reports a nil callback passed to Map, MapIn, Pmap or
	// the lanes calls; the call fails before any item runs.
	ErrNilCallback = errors.New("hataori: nil callback")
	// ErrDomainClosed reports use of a domain after Close.
	ErrDomainClosed = errors.New("hataori: domain is closed")
	// ErrWorkerEntry reports a call made from a worker of a domain (this
	// one or another), which would deadlock or oversubscribe the CPUs.
	ErrWorkerEntry = errors.New("hataori: called from a domain worker")
	// ErrDomainBusy reports that the domain is already admitted to another
	// operation. Admission never blocks.
	ErrDomainBusy = errors.New("hataori: domain is busy")
	// ErrNotLent reports a Domain.Parallel call while the domain is not
	// lent to an Inner item.
	ErrNotLent = errors.New("hataori: domain is not lent to an Inner item")
)

// Sentinel errors of domain construction, wrapped by *DomainError.
var (
	// ErrInvalidPinning reports a DomainConfig.Pinning other than Declared
	// or Managed.
	ErrInvalidPinning = errors.New("invalid pinning mode")
	// ErrNoWorkers reports a worker count below one.
	ErrNoWorkers = errors.New("no workers requested")
	// ErrCPUNotAllowed reports a CPU outside the process's allowed set
	// (or a negative CPU number).
	ErrCPUNotAllowed = errors.New("cpu not in the process's allowed set")
	// ErrDuplicateCPU reports a CPU listed twice.
	ErrDuplicateCPU = errors.New("cpu listed twice")
	// ErrTooManyWorkers reports more workers than declared CPUs.
	ErrTooManyWorkers = errors.New("more workers than cpus")
	// ErrPinFailed reports that a worker could not be pinned to its CPU,
	// or that the pin did not verify.
	ErrPinFailed = errors.New("pinning a worker failed")
	// ErrStartTimeout reports a worker that did not start within
	// DomainConfig.StartTimeout.
	ErrStartTimeout = errors.New("worker did not start in time")
)

// MapError reports a failing callback of Map or MapIn: the lowest failing
// input index and the callback error's message, bounded to 4096 bytes and
// cut only at a UTF-8 character boundary. The callback's own error stays
// reachable through Unwrap, errors.Is and errors.As.
type MapError struct {
	// Index is the input index of the (lowest) failing item.
	Index int
	// Message is the callback error's bounded message.
	Message string

	err error
}

func newMapError(i int, err error) *MapError {
	return &MapError{Index: i, Message: errmsg.Bound(err.Error()), err: err}
}

// Error returns "hataori: item <index>: <message>".
func (e *MapError) Error() string {
	return "hataori: item " + strconv.Itoa(e.Index) + ": " + e.Message
}

// Unwrap returns the callback's error.
func (e *MapError) Unwrap() error { return e.err }

// DomainError reports a failed NewDomain. Err wraps one of the
// construction sentinels (ErrInvalidPinning, ErrNoWorkers,
// ErrCPUNotAllowed, ErrDuplicateCPU, ErrTooManyWorkers, ErrPinFailed,
// ErrStartTimeout), possibly joined with an operating-system error.
type DomainError struct {
	// Op is the construction step that failed: "validate", "pin" or
	// "start".
	Op string
	// CPU is the CPU concerned, or -1 when none is.
	CPU int
	// Err is the cause.
	Err error
}

// Error returns "hataori: domain <op>[: cpu <n>]: <cause>".
func (e *DomainError) Error() string {
	s := "hataori: domain " + e.Op
	if e.CPU >= 0 {
		s += ": cpu " + strconv.Itoa(e.CPU)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return errmsg.Bound(s)
}

// Unwrap returns the cause.
func (e *DomainError) Unwrap() error { return e.Err }
