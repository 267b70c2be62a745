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
//     `msgpack` tag), with the keys of map[string]string, map[string]bool
//     and map[string]any sorted (msgpack sorts no other maps). Values whose
//     msgpack encoding methods have pointer receivers are handed to msgpack
//     addressable, so those methods are called. Payloads of exactly the
//     builtin int, int64, uint, uint64 or float64 are written and read by
//     hand (scalar_msgpack.go): the same bytes, and the same values for
//     every code the library accepts, at a few nanoseconds a value; any
//     other payload of those types is decoded by the library.
//
// Numeric slices nested inside structs are encoded element by element by
// msgpack unless the field uses the type hataori.Bulk, which carries them
// as bytes too (its EncodeMsgpack/DecodeMsgpack methods are EncodeBulk and
// DecodeBulk). Opting in per field is the only way to get bulk transfer for
// nested slices: a coder in msgpack's registry (msgpack.Register and
// RegisterExt are process-wide) would change how the program's own msgpack
// use encodes []float64.
//
// A time.Time, anywhere in a value, is a msgpack extension of Hataori's own
// (type 'Z'; time_msgpack.go documents its bytes) that carries the instant
// and the zone. msgpack has no per-encoder type hooks, so its coder is the
// one thing Hataori puts in msgpack's registry (when package wire
// initialises), and it acts only for Hataori's own encoders and decoders:
// for every other one, the program's own msgpack use, it reads and writes
// msgpack's timestamp extension exactly as msgpack's built-in time coder
// does, except that a msgpack nil where a time.Time value is expected is an
// error where msgpack v5.4.1 panics. A program that registers a time.Time
// coder of its own replaces Hataori's (times then cross as that coder
// carries them), and so does msgpack for the time fields of a struct type
// it laid out before package wire initialised (a msgpack use in an init
// function that runs earlier): those cross as msgpack's timestamp, the
// instant in time.Local.
//
// # What crosses ranks
//
// CheckType (cached per type) says, before anything is sent, whether the
// values of a type survive the trip exactly; the data collectives refuse a
// type it rejects in their collective preflight. What crosses:
//
//   - booleans, strings (any bytes), signed and unsigned integers and
//     floats of every size, exactly (floats bit for bit, NaN and -0
//     included);
//   - slices, arrays, pointers (nil stays nil) and maps (nil and empty stay
//     distinct) of what crosses; a map key must not hold pointers, whose
//     identity the receiver cannot rebuild;
//   - structs by their exported fields, keyed by field name or by the name
//     in a `msgpack:"name"` tag: embedded structs are inlined as msgpack
//     inlines them, `msgpack:"-"` leaves a field out on purpose (it arrives
//     as its zero value), `omitempty` sends an empty value as nothing (it
//     arrives as its zero value), `_` and zero-size fields hold nothing;
//   - numeric slices in bulk: a top-level numeric slice value (see
//     Payloads), and a hataori.Bulk field anywhere;
//   - a type with its own msgpack encoding, on the type or its pointer, on
//     both sides: EncodeMsgpack/DecodeMsgpack (msgpack.CustomEncoder and
//     CustomDecoder), MarshalMsgpack/UnmarshalMsgpack, MarshalBinary/
//     UnmarshalBinary or MarshalText/UnmarshalText. It may keep unexported
//     state; the check trusts its methods and does not look inside;
//   - time.Time, anywhere in a value, as the same instant in the same
//     zone, whichever rank computed it: Equal holds, Zone() gives the same
//     name and offset, Location().String() the same name. time.UTC comes
//     back as time.UTC, the sender's time.Local as the receiver's
//     time.Local when that gives the same zone name and offset at that
//     instant, any other location (time.LoadLocation, time.FixedZone) as
//     time.LoadLocation of its name when the receiver's tz database has it
//     and it gives the same zone name and offset at that instant; failing
//     that (another tz database version, a Local the receiver does not
//     share), as time.FixedZone(zone name, offset): Zone() is still the
//     sender's, but Location().String() is then the zone's name ("EST"),
//     not the location's ("America/New_York"). The receiver caches what it
//     resolved (at most 1024 zones by name, 1024 fixed zones), so repeated
//     values neither reload the tz database nor allocate. The monotonic
//     clock reading does not cross (it means nothing in another process):
//     a time that crossed equals t.Round(0), while one the root kept (its
//     own results are never encoded) still has it. So compare times with
//     Equal, not ==, which also compares the monotonic reading and the
//     *time.Location pointer (a location rebuilt on the receiver is its
//     own, except time.UTC and time.Local); a callback that returns
//     t.Round(0) in time.UTC or time.Local gets == too. Inside a type with
//     its own encoding methods a time.Time is what those methods write:
//     enc.EncodeValue and dec.DecodeValue of it (or of a struct holding
//     it) carry the zone; enc.EncodeTime, enc.Encode(t), dec.DecodeTime
//     and dec.Decode(&t) are msgpack's timestamp, the instant decoded in
//     time.Local (and dec.Decode(&t) cannot read what enc.Encode(&t)
//     writes, the zoned form).
//
// What does not: an unexported field without a `msgpack:"-"` tag (msgpack
// skips it silently, so the receiver would see a zero value), a value of
// interface type anywhere, any itself included (the dynamic type does not
// survive: an int comes back as int8, a struct as a map), channels,
// functions, unsafe.Pointer, uintptr, complex numbers outside the bulk
// path, and struct layouts in which msgpack itself loses a field (two
// fields with the same msgpack name, a field shadowed under an explicit
// inline tag, an inlined embedded pointer, an embedded field of an
// unexported non-struct type, encoding methods promoted from an embedded
// field, which encode that field alone, a type whose encoding methods are
// those of an embedded time.Time, which keep the offset but not the zone's
// name, and encoding methods on one side only). The error, an *Error of kind ErrType that also matches
// ErrUnsupportedType, names the type, the path of the field inside it
// ("field Inner.x", "element [i]", "the key type of field Index") and the
// fix.
//
// The check is static. It cannot see what it cannot name: encoders
// registered in msgpack's process-wide registry with functions
// (msgpack.Register, RegisterExtEncoder) are invisible to it, so give such
// types methods instead; a cyclic value (a ring of pointers) passes the
// check of its recursive type but never finishes encoding; pointers that
// share a target arrive as separate copies.
//
// # Copies
//
// EncodeValue/EncodeItems copy a bulk value once, into the frame (a batch
// of bulk values is sized up front: one allocation at most, none when dst
// has room); DecodeValue copies it once, out of it. DecodeValueOwned and
// DecodeItemsOwned avoid that copy: they alias the payload (which the
// caller hands over) when the data is aligned — AlignPad says how to place
// a received frame so that it is — and SplitValue / BodyBuffer / JoinValue
// move a bulk value as a head (header bytes) and a body that is the
// sender's own memory and, on the receiver, the new value's memory, so the
// transport copies it directly.
//
// # Builds
//
// The codec exists only in builds with an MPI backend (tag mpirt or
// mpicgo): only they import msgpack. Without a backend nothing crosses
// ranks, the entry points above fail with ErrEncode or ErrDecode
// (codec_none.go), and the build links no serialization library; the frame
// header, the type check (which recognises msgpack's encoding methods by
// name and signature), the payload validation and the split helpers build
// in every configuration.
//
// # Errors
//
// Every failure is an *Error whose Kind names the class (ErrVersion,
// ErrKind, ErrSource, ErrLength, ErrCount, ErrOverflow, ErrTruncated,
// ErrTrailing, ErrDecode, ErrEncode, ErrType). errors.Is(err, &Error{Kind: k}) is true
// for any *Error of kind k in err's chain, whatever its detail. Decoding never
// panics on malformed input and never allocates more than a small constant
// factor of the bytes actually present.
package wire
