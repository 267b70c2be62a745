package mpiabi_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
)

// childNonblocking: Ibarrier and Iallreduce on a singleton complete under
// Test, which frees the request; Iallreduce's MIN of one rank is its input.
func childNonblocking(t *testing.T, l *mpiabi.Lib, family string) {
	initChild(t, l)
	if !l.Nonblocking() {
		t.Fatalf("%s wrapper: Nonblocking() = false", family)
	}
	wait := func(what string, req mpiabi.Request) {
		t.Helper()
		for i := 0; ; i++ {
			done, err := l.Test(&req, nil)
			if err != nil {
				t.Fatalf("%s: Test = %v", what, err)
			}
			if done {
				break
			}
			if i > 1e7 {
				t.Fatalf("%s: not complete after %d tests", what, i)
			}
		}
		if req != mpiabi.Request(l.RequestNull) {
			t.Errorf("%s: completed request %#x, want the null request %#x", what, req, l.RequestNull)
		}
	}
	req, err := l.Ibarrier(l.CommWorld)
	if err != nil {
		t.Fatalf("Ibarrier = %v", err)
	}
	wait("Ibarrier", req)
	if !l.HasCommIdup() {
		t.Fatalf("%s wrapper: no MPIABI_Comm_idup", family)
	}
	dup := new(mpiabi.Comm)
	req, err = l.CommIdup(l.CommWorld, dup)
	if err != nil {
		t.Fatalf("CommIdup = %v", err)
	}
	wait("CommIdup", req)
	if *dup == l.CommWorld || *dup == l.CommNull || *dup == 0 {
		t.Fatalf("CommIdup gave %#x (world %#x, null %#x)", *dup, l.CommWorld, l.CommNull)
	}
	if n, err := l.CommSize(*dup); err != nil || n != 1 {
		t.Errorf("size of the duplicate = %d, %v", n, err)
	}
	if err := l.CommFree(dup); err != nil {
		t.Errorf("CommFree of the duplicate: %v", err)
	}
	in := []int64{math.MinInt64, -1, 0, math.MaxInt64}
	out := make([]int64, len(in))
	req, err = l.Iallreduce(unsafe.Pointer(&in[0]), unsafe.Pointer(&out[0]), len(in), l.Int64, l.Min, l.CommWorld)
	if err != nil {
		t.Fatalf("Iallreduce = %v", err)
	}
	wait("Iallreduce", req)
	for i := range in {
		if out[i] != in[i] {
			t.Errorf("Iallreduce MIN on one rank: out[%d] = %d, want %d", i, out[i], in[i])
		}
	}
}
