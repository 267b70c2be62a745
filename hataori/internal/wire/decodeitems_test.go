//go:build mpirt || mpicgo

package wire

// DecodeItems is DecodeItemsOwned for a payload the caller keeps: the
// result never shares memory with payload. Production code receives into
// buffers it hands over and uses DecodeItemsOwned; the tests compare the
// two.
func DecodeItems[T any](payload []byte, count int) ([]T, error) {
	countDecode()
	return decodeItems[T](payload, count, false)
}
