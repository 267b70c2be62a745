package hataori

import (
	"strconv"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
)

// MapError reports a failing callback of [Map] or [MapIn]: the lowest failing
// input index and the callback error's message, bounded to 4096 bytes and
// cut only at a UTF-8 character boundary. The callback's own error stays
// reachable through Unwrap, [errors.Is] and [errors.As].
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

// DomainError reports a failed [NewDomain]. Err wraps one of the
// construction sentinels ([ErrInvalidPinning], [ErrNoWorkers],
// [ErrCPUNotAllowed], [ErrDuplicateCPU], [ErrTooManyWorkers],
// [ErrPinFailed], [ErrStartTimeout]), possibly joined with an
// operating-system error.
type DomainError struct {
	// Op is the construction step that failed: "validate", "pin" or
	// "start".
	Op string
	// CPU is the CPU concerned, or -1 when none is.
	CPU int
	// Err is the cause.
	Err error
}

// Error returns "hataori: domain <op>[: cpu <n>]: <cause>", the cause
// without its own "hataori: " tag.
func (e *DomainError) Error() string {
	s := "hataori: domain " + e.Op
	if e.CPU >= 0 {
		s += ": cpu " + strconv.Itoa(e.CPU)
	}
	if e.Err != nil {
		s += ": " + untag(e.Err.Error())
	}
	return errmsg.Bound(s)
}

// Unwrap returns the cause.
func (e *DomainError) Unwrap() error { return e.Err }
