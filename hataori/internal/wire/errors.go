package wire

import "fmt"

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
}

// Error returns "wire: <kind>: <detail>: <underlying error>".
func (e *Error) Error() string {
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
// failure.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Kind == e.Kind
}

func errorf(kind ErrorKind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Detail: fmt.Sprintf(format, args...), Err: err}
}
