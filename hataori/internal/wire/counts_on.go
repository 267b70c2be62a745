//go:build hataoridebug

package wire

import "sync/atomic"

// Counting says whether this build counts codec calls (Counts): only under
// the hataoridebug tag, which the multi-rank tests use; counts_off.go makes
// counting free otherwise.
const Counting = true

var encodeCalls, decodeCalls atomic.Uint64

func countEncode() { encodeCalls.Add(1) }
func countDecode() { decodeCalls.Add(1) }

// Counts returns how many times EncodeItems/EncodeValue/SplitValue
// (encodes) and DecodeItemsOwned/DecodeValue/DecodeValueOwned/JoinValue
// (decodes) have been called in this process. Tests use it to show that a
// path moves nothing through the codec. Each codec call costs one atomic
// add for it, in this (hataoridebug) build only.
func Counts() (encodes, decodes uint64) {
	return encodeCalls.Load(), decodeCalls.Load()
}
