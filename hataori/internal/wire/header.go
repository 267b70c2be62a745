package wire

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Version is the frame protocol version this package writes and accepts.
const Version uint8 = 8

// HeaderSize is the size in bytes of an encoded Header.
const HeaderSize = 32

// MaxBytes is the largest frame, header included, that may be sent or
// received: the MPI int count limit. It is a variable only so that tests can
// lower it; programs must not change it.
var MaxBytes int64 = math.MaxInt32

// Kind is a frame's message kind.
type Kind uint8

// Message kinds. The scheduler uses KindReady … KindDrain and KindCancel,
// the data collectives KindBroadcast, KindScatter and KindGather.
const (
	KindReady Kind = iota + 1
	KindTask
	KindResult
	KindStop
	KindDrain
	KindBroadcast
	KindScatter
	KindGather
	KindCancel
	kindEnd
)

var kindStrings = [...]string{
	KindReady:     "READY",
	KindTask:      "TASK",
	KindResult:    "RESULT",
	KindStop:      "STOP",
	KindDrain:     "DRAIN",
	KindBroadcast: "BROADCAST",
	KindScatter:   "SCATTER",
	KindGather:    "GATHER",
	KindCancel:    "CANCEL",
}

// String returns the kind's protocol name, for example "READY".
func (k Kind) String() string {
	if k > 0 && k < kindEnd {
		return kindStrings[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool { return k > 0 && k < kindEnd }

// Header is the fixed part of every frame. Its encoding is little-endian:
//
//	offset 0  Version  uint8
//	offset 1  Kind     uint8
//	offset 2  Status   uint8 (a scheduler status; opaque to this package)
//	offset 3  reserved uint8 (zero)
//	offset 4  Count    uint32 (items in the payload)
//	offset 8  BatchID  uint64
//	offset 16 Len      uint64 (payload bytes after the header)
//	offset 24 Slot     uint32 (the sending or addressed slot of a rank)
//	offset 28 reserved uint32 (zero)
//
// The size keeps a payload that follows the header 8-byte aligned.
type Header struct {
	Version uint8
	Kind    Kind
	Status  uint8
	Count   uint32
	BatchID uint64
	Len     uint64
	Slot    uint32
}

// Put writes h into b[:HeaderSize]. b must hold at least HeaderSize bytes.
func (h Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	b[0] = h.Version
	b[1] = uint8(h.Kind)
	b[2] = h.Status
	b[3] = 0
	binary.LittleEndian.PutUint32(b[4:], h.Count)
	binary.LittleEndian.PutUint64(b[8:], h.BatchID)
	binary.LittleEndian.PutUint64(b[16:], h.Len)
	binary.LittleEndian.PutUint32(b[24:], h.Slot)
	binary.LittleEndian.PutUint32(b[28:], 0)
}

// ParseHeader decodes the header at the front of b. It checks the length of
// b, the version, the reserved byte, that the kind is known, and that Len does
// not exceed MaxBytes; it does not compare Len with len(b).
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, errorf(ErrTruncated, nil, "header needs %d bytes, have %d", HeaderSize, len(b))
	}
	h := Header{
		Version: b[0],
		Kind:    Kind(b[1]),
		Status:  b[2],
		Count:   binary.LittleEndian.Uint32(b[4:]),
		BatchID: binary.LittleEndian.Uint64(b[8:]),
		Len:     binary.LittleEndian.Uint64(b[16:]),
		Slot:    binary.LittleEndian.Uint32(b[24:]),
	}
	if h.Version != Version {
		return Header{}, errorf(ErrVersion, nil, "version %d, want %d", h.Version, Version)
	}
	if !h.Kind.Valid() {
		return Header{}, errorf(ErrKind, nil, "unknown kind %d", uint8(h.Kind))
	}
	if b[3] != 0 {
		return Header{}, errorf(ErrDecode, nil, "reserved header byte is %d, want 0", b[3])
	}
	if r := binary.LittleEndian.Uint32(b[28:]); r != 0 {
		return Header{}, errorf(ErrDecode, nil, "reserved header word is %d, want 0", r)
	}
	if lim := PayloadLimit(); h.Len > uint64(lim) {
		return Header{}, errorf(ErrLength, nil, "payload length %d exceeds limit %d", h.Len, lim)
	}
	return h, nil
}

// PayloadLimit is the largest payload a frame may carry: MaxBytes minus the
// header.
func PayloadLimit() int64 {
	if MaxBytes < HeaderSize {
		return 0
	}
	return MaxBytes - HeaderSize
}
