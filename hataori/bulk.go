package hataori

// Number is the set of element types a [Bulk] slice may hold: the fixed-size
// integer, float and complex types, and types defined on them.
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 |
		~int | ~uint | ~float32 | ~float64 | ~complex64 | ~complex128
}

// Bulk is a numeric slice that crosses ranks as one block of little-endian
// bytes instead of element by element. A value of type []float64, []int64,
// []byte, … passed directly (as a [Pmap] item or result, or a [Broadcast],
// [Scatter] or [Gather] value) already travels in bulk; declare numeric slices
// nested inside structs as Bulk to get the same:
//
//	type Sample struct {
//		Name   string
//		Values hataori.Bulk[float64]
//	}
//
// Bulk converts freely to and from []E. Sending one costs a copy of its
// bytes into the frame (and a byte swap on a big-endian host); receiving one
// allocates a new slice of its length. A nil Bulk arrives as nil, an empty
// one as empty. A Bulk of complex numbers crosses ranks too, where a plain
// []complex128 field cannot (msgpack encodes no complex number).
type Bulk[E Number] []E
