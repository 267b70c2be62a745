// Package wire is Hataori's frame format and payload codec for values that
// cross rank boundaries. It is pure Go and makes no MPI call.
//
// # Frames
//
// A frame is one MPI message: a fixed HeaderSize-byte little-endian Header
// followed by Header.Len payload bytes. The receiver sizes the message with
// MPI_Probe/MPI_Get_count, checks the count against MaxBytes before it
// allocates, receives the whole message (so a malformed frame never leaves
// its sender blocked), and only then parses the header and checks that the
// announced Len equals the received payload size.
//
// # Payloads
//
// A payload is a sequence of values, each encoded independently:
//
//   - a value whose type is a slice of a fixed-size number type ([]byte,
//     []int8 … []uint64, []int, []uint, []float32, []float64, []complex64,
//     []complex128, and named types with such an underlying type, unless the
//     type implements its own msgpack encoding) travels in bulk as one
//     msgpack bin value holding its elements' little-endian bytes; a nil
//     slice is msgpack nil, so nil and empty stay distinct;
//   - every other value is encoded with github.com/vmihailenco/msgpack/v5
//     using that package's defaults (structs as maps keyed by field name or
//     `msgpack` tag) plus sorted map keys, so equal values encode to equal
//     bytes.
//
// Numeric slices nested inside structs are encoded element by element by
// msgpack unless the field uses the Bulk type, which carries them as bytes
// too. Hataori does not register anything in msgpack's global type registry
// (msgpack.Register and RegisterExt are process-wide and would change how the
// program's own msgpack use encodes []float64), so opting in per field is the
// only way to get bulk transfer for nested slices.
//
// # Copies
//
// EncodeValue/EncodeItems copy a bulk value once, into the frame (a batch
// of bulk values is sized up front: one allocation at most, none when dst
// has room);
// DecodeValue/DecodeItems copy it once, out of it. Two variants avoid those
// copies where the caller can afford it: DecodeValueOwned and
// DecodeItemsOwned alias the payload (which the caller hands over) when the
// data is aligned — AlignPad says how to place a received frame so that it
// is — and SplitValue /
// BodyBuffer / JoinValue move a bulk value as a head (header bytes) and a
// body that is the sender's own memory and, on the receiver, the new value's
// memory, so the transport copies it directly.
//
// # Errors
//
// Every failure is an *Error whose Kind names the class (ErrVersion,
// ErrKind, ErrSource, ErrLength, ErrCount, ErrOverflow, ErrTruncated,
// ErrTrailing, ErrDecode, ErrEncode). errors.Is(err, &Error{Kind: k}) is true
// for any *Error of kind k in err's chain, whatever its detail. Decoding never
// panics on malformed input and never allocates more than a small constant
// factor of the bytes actually present.
package wire
