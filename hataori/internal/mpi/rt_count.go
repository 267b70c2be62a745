//go:build mpirt && !mpicgo

package mpi

import (
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/mpiabi/launch"
)

// Reading a message's byte count with MPIABI_Get_count costs a second
// foreign call after every Recv, Probe and Iprobe, which made an 8-byte
// ping-pong ~35% slower than with the cgo backend. The first 24 bytes of an
// MPIABI status are a copy of the wrapped MPI's native MPI_Status, whose
// public layout is fixed for the two MPI families supported here, so the
// count can be read from it directly. The layout is chosen from the
// library's version string and trusted only after it agreed with
// MPIABI_Get_count on verifyCount receives of non-empty messages; any
// disagreement, and any other library, keeps MPIABI_Get_count for good.

// statusLayout names a native MPI_Status layout.
type statusLayout int8

const (
	layoutUndetermined statusLayout = iota // library not asked yet
	layoutNone                             // unknown: always MPIABI_Get_count
	// layoutOpenMPI: struct { int MPI_SOURCE, MPI_TAG, MPI_ERROR,
	// _cancelled; size_t _ucount; } (_ucount in bytes).
	layoutOpenMPI
	// layoutMPICH: struct { int count_lo, count_hi_and_cancelled,
	// MPI_SOURCE, MPI_TAG, MPI_ERROR; } (count in bytes; bit 0 of
	// count_hi_and_cancelled is the cancelled flag).
	layoutMPICH
)

// verifyCount is the number of agreeing non-empty receives after which the
// decoded count is trusted.
const verifyCount = 8

// countState is the decoding state; only the MPI main thread touches it.
var countState struct {
	layout   statusLayout
	verified int
	trusted  bool
}

// layoutOf picks the native status layout from a library version string
// (the MPI under a wrapper: see launch.ParseVersion).
func layoutOf(version string) statusLayout {
	switch launch.FamilyOf(version) {
	case launch.OpenMPI:
		return layoutOpenMPI
	case launch.MPICH:
		return layoutMPICH
	}
	return layoutNone
}

// decodeCount reads the byte count from the native part of s under
// layout; ok is false when the native SOURCE and TAG do not match the
// MPIABI ones (so the layout cannot be right).
func decodeCount(s *mpiabi.Status, layout statusLayout) (n int, ok bool) {
	native := (*[6]int32)(unsafe.Pointer(s))
	switch layout {
	case layoutOpenMPI:
		if native[0] != s.Source || native[1] != s.Tag {
			return 0, false
		}
		return int(*(*uint64)(unsafe.Pointer(&native[4]))), true
	case layoutMPICH:
		if native[2] != s.Source || native[3] != s.Tag {
			return 0, false
		}
		return int(uint64(uint32(native[0])) | uint64(uint32(native[1])>>1)<<32), true
	}
	return 0, false
}

// byteCount returns the byte count of the message described by s.
func byteCount(l *mpiabi.Lib, s *mpiabi.Status) (int, error) {
	cs := &countState
	if cs.trusted {
		if n, ok := decodeCount(s, cs.layout); ok {
			return n, nil
		}
	}
	n, err := l.GetCount(s, l.Byte)
	if err != nil {
		return 0, wrap(err)
	}
	if !cs.trusted {
		learnLayout(l, s, n)
	}
	return n, nil
}

// learnLayout checks the candidate layout against a count from
// MPIABI_Get_count.
func learnLayout(l *mpiabi.Lib, s *mpiabi.Status, n int) {
	cs := &countState
	if cs.layout == layoutUndetermined {
		cs.layout = layoutNone
		if v, err := l.LibraryVersion(); err == nil {
			cs.layout = layoutOf(v)
		}
	}
	if cs.layout == layoutNone || n == 0 {
		return
	}
	if d, ok := decodeCount(s, cs.layout); !ok || d != n {
		cs.layout = layoutNone
		return
	}
	cs.verified++
	cs.trusted = cs.verified >= verifyCount
}
