package sched

import (
	"fmt"
	"math"
)

// Class is the fixed ordinal of an error class inside an error key. The
// order is part of the deterministic winner rule: for the same task key a
// wire/protocol error beats a user error, which beats a drain (call-level)
// error.
type Class int64

const (
	// ClassWire covers wire and protocol errors (a frame or payload that
	// fails to decode, a protocol violation on a recoverable path).
	ClassWire Class = iota
	// ClassUser covers errors returned by the callback.
	ClassUser
	// ClassDrain covers call-level conditions found while the call runs
	// or drains, such as a cancelled context; their task key is N.
	ClassDrain
	// NumClasses is the number of classes (ERROR_CLASS_COUNT).
	NumClasses
)

// NoError is the reserved key meaning "no error on this rank".
const NoError int64 = math.MaxInt64

// Key encodes ((taskKey*NumClasses + class)*size + rank) with every step
// checked to stay in the nonnegative int64 range and below NoError.
// taskKey is the input index, or the input length N for call-level errors.
func Key(taskKey int64, class Class, size, rank int) (int64, error) {
	if taskKey < 0 || class < 0 || class >= NumClasses || size < 1 || rank < 0 || rank >= size {
		return 0, &Error{Op: "Key", Rank: rank, Msg: fmt.Sprintf("task key %d, class %d, size %d", taskKey, class, size), Err: ErrConfig}
	}
	ovf := &Error{Op: "Key", Rank: rank, Msg: fmt.Sprintf("task key %d, class %d, size %d", taskKey, class, size), Err: ErrOverflow}
	n := int64(NumClasses)
	if taskKey > (math.MaxInt64-int64(class))/n {
		return 0, ovf
	}
	k := taskKey*n + int64(class)
	s := int64(size)
	if k > (math.MaxInt64-int64(rank))/s {
		return 0, ovf
	}
	k = k*s + int64(rank)
	if k == NoError {
		return 0, ovf
	}
	return k, nil
}

// SplitKey decodes a key made by Key for the same size.
func SplitKey(key int64, size int) (taskKey int64, class Class, rank int) {
	s := int64(size)
	rank = int(key % s)
	k := key / s
	return k / int64(NumClasses), Class(k % int64(NumClasses)), rank
}
