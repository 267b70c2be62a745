//go:build mpirt && !mpicgo

package mpi

import (
	"testing"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
)

// mkStatus builds an MPIABI status with native bytes and SOURCE/TAG.
func mkStatus(native [6]int32, src, tag int32) mpiabi.Status {
	var s mpiabi.Status
	*(*[6]int32)(unsafe.Pointer(&s)) = native
	s.Source, s.Tag = src, tag
	return s
}

func TestDecodeCount(t *testing.T) {
	big := uint64(5)<<32 | 7 // a count beyond 32 bits
	cases := []struct {
		name   string
		native [6]int32
		layout statusLayout
		want   int
		ok     bool
	}{
		{"openmpi", [6]int32{3, 9, 0, 0, 1000, 0}, layoutOpenMPI, 1000, true},
		{"openmpi big", [6]int32{3, 9, 0, 0, int32(uint32(big)), int32(big >> 32)}, layoutOpenMPI, int(big), true},
		{"openmpi wrong source", [6]int32{4, 9, 0, 0, 1000, 0}, layoutOpenMPI, 0, false},
		{"mpich", [6]int32{1000, 0, 3, 9, 0, 0}, layoutMPICH, 1000, true},
		{"mpich cancelled bit", [6]int32{1000, 1, 3, 9, 0, 0}, layoutMPICH, 1000, true},
		{"mpich big", [6]int32{7, 5 << 1, 3, 9, 0, 0}, layoutMPICH, int(big), true},
		{"mpich wrong tag", [6]int32{1000, 0, 3, 8, 0, 0}, layoutMPICH, 0, false},
		{"mpich bytes read as openmpi", [6]int32{1000, 0, 3, 9, 0, 0}, layoutOpenMPI, 0, false},
		{"unknown layout", [6]int32{3, 9, 0, 0, 1000, 0}, layoutNone, 0, false},
	}
	for _, c := range cases {
		s := mkStatus(c.native, 3, 9)
		n, ok := decodeCount(&s, c.layout)
		if ok != c.ok || (ok && n != c.want) {
			t.Errorf("%s: decodeCount = %d, %v; want %d, %v", c.name, n, ok, c.want, c.ok)
		}
	}
}

func TestLayoutOf(t *testing.T) {
	cases := map[string]statusLayout{
		"Open MPI v4.1.4, package: Debian OpenMPI": layoutOpenMPI,
		"MPICH Version:\t4.0.2":                    layoutMPICH,
		"Intel(R) MPI Library 2021":                layoutNone,
		"":                                         layoutNone,
	}
	for v, want := range cases {
		if got := layoutOf(v); got != want {
			t.Errorf("layoutOf(%q) = %d, want %d", v, got, want)
		}
	}
}
