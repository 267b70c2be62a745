package wire

import (
	"errors"
	"fmt"
)

// ErrorKind classifies a wire failure.
type ErrorKind int

// The wire failure classes.
const (
	// ErrVersion: the header carries an unknown protocol version.
	ErrVersion ErrorKind = iota + 1
	// ErrKind: the header carries an unknown or unexpected message kind.
	ErrKind
	// ErrSource: a message arrived with an unexpected tag or source.
	ErrSource
	// ErrLength: a length exceeds MaxBytes, or the announced payload length
	// differs from the received one.
	ErrLength
	// ErrCount: an item count is impossible or differs from the expected one.
	ErrCount
	// ErrOverflow: an integer conversion would overflow.
	ErrOverflow
	// ErrTruncated: fewer bytes are present than the data announces.
	ErrTruncated
	// ErrTrailing: bytes remain after the announced data was decoded.
	ErrTrailing
	// ErrDecode: the payload is not a valid encoding of the receiver's type.
	ErrDecode
	// ErrEncode: a value could not be encoded.
	ErrEncode
	// ErrType: values of a type cannot cross ranks without loss (see
	// CheckType). Such an *Error also matches ErrUnsupportedType.
	ErrType
)

var kindNames = [...]string{
	ErrVersion:   "version",
	ErrKind:      "kind",
	ErrSource:    "source",
	ErrLength:    "length",
	ErrCount:     "count",
	ErrOverflow:  "overflow",
	ErrTruncated: "truncated",
	ErrTrailing:  "trailing bytes",
	ErrDecode:    "decode",
	ErrEncode:    "encode",
	ErrType:      "type",
}

// String returns the class name, for example "trailing bytes".
func (k ErrorKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// Error is a typed wire failure.
type Error struct {
	// Kind is the failure class.
	Kind ErrorKind
	// Detail says what was wrong, for example "announced 16 bytes, received 8".
	Detail string
	// Err is the underlying error (for example a msgpack error), or nil.
	Err error

	item int // 1 + the position of the value that failed in a list, 0 if none
}

// ItemPosition returns the position, within the list of values given to
// EncodeItems or decoded by DecodeItemsOwned, of the value that err is
// about, and false when err is not about one value (a payload that is
// malformed as a whole: a bad structure, trailing bytes, a wrong count).
func ItemPosition(err error) (int, bool) {
	var e *Error
	if errors.As(err, &e) && e.item > 0 {
		return e.item - 1, true
	}
	return -1, false
}

// Error returns "wire: <kind>: <detail>: <underlying error>", except for
// kind ErrType, whose message is about the caller's type rather than the
// wire: "hataori: <detail>", for example "hataori: type main.point cannot
// cross ranks: field x is unexported, …".
func (e *Error) Error() string {
	if e.Kind == ErrType && e.Err == nil {
		return "hataori: " + e.Detail
	}
	s := "wire: " + e.Kind.String()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error of the same Kind, so that
// errors.Is(err, &wire.Error{Kind: wire.ErrTrailing}) matches any trailing-byte
// failure, or target is ErrUnsupportedType and e is of kind ErrType.
func (e *Error) Is(target error) bool {
	if target == ErrUnsupportedType {
		return e.Kind == ErrType
	}
	t, ok := target.(*Error)
	return ok && t != nil && t.Kind == e.Kind
}

func errorf(kind ErrorKind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...), Err: err}
}
