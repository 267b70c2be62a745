package wire

import "sync/atomic"

var encodeCalls, decodeCalls atomic.Uint64

func countEncode() { encodeCalls.Add(1) }
func countDecode() { decodeCalls.Add(1) }

// Counts returns how many times EncodeItems/EncodeValue/SplitValue
// (encodes) and DecodeItemsOwned/DecodeValue/DecodeValueOwned/JoinValue
// (decodes) have been called in this process. Tests use it to show that a
// path moves nothing through the codec.
func Counts() (encodes, decodes uint64) {
	return encodeCalls.Load(), decodeCalls.Load()
}
