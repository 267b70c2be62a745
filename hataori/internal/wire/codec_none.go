//go:build !mpirt && !mpicgo

package wire

// The payload codec of a build without an MPI backend: none. Such a build
// links no serialization library, and nothing in it ever reaches these
// functions (every collective call fails with ErrNoMPI before it moves
// data, and a world of one rank encodes nothing); should anything reach
// them anyway, they fail with a typed error instead of encoding.

const noCodec = "no payload codec in a build without an MPI backend (build with -tags mpirt or -tags mpicgo)"

func encodeValue[T any](dst []byte, _ T) ([]byte, error) {
	return dst, &Error{Kind: ErrEncode, Detail: noCodec}
}

func encodeItems[T any](dst []byte, _ []T) ([]byte, error) {
	return dst, &Error{Kind: ErrEncode, Detail: noCodec}
}

func decodeValue[T any](_ []byte, _ bool) (T, error) {
	var zero T
	return zero, &Error{Kind: ErrDecode, Detail: noCodec}
}

func decodeItems[T any](_ []byte, _ int, _ bool) ([]T, error) {
	return nil, &Error{Kind: ErrDecode, Detail: noCodec}
}

func encodeItemsSeg[T any](dst []byte, _ []T, _ int) ([]byte, []Segment, error) {
	return dst, nil, &Error{Kind: ErrEncode, Detail: noCodec}
}

func decodeItemsSeg[T any](_ []byte, _ int, _ []Segment, _ bool) ([]T, error) {
	return nil, &Error{Kind: ErrDecode, Detail: noCodec}
}
