//go:build !hataoridebug

package wire

// Counting is false: without the hataoridebug tag the codec counts nothing
// (counts_on.go), and the calls below compile away. A test that compares
// Counts must check Counting first, or it proves nothing.
const Counting = false

func countEncode() {}
func countDecode() {}

// Counts returns 0, 0 in this build (Counting is false).
func Counts() (encodes, decodes uint64) { return 0, 0 }
