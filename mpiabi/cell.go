package mpiabi

import (
	"sync/atomic"

	"github.com/ebitengine/purego"
)

// maxArgs is the largest argument count of the MPIABI functions called here.
const maxArgs = 8

// cell is heap scratch space for one MPIABI call: the argument list handed
// to purego.SyscallN and the out-parameters (an int flag/size/provided, a
// handle).
//
// Why: SyscallN is //go:uintptrescapes, so calling it with a literal
// argument list heap-allocates that list on every call, and passing the
// address of a local out-variable moves the variable to the heap on every
// call. Passing a recycled cell's argument array instead keeps the calls
// allocation-free. The price is that the compiler no longer sees the Go
// pointers inside the arguments, so each call site (1) forces the caller's
// memory onto the heap with forceHeap (heap objects never move, unlike
// stacks), (2) converts the pointers to uintptr, and (3) keeps them alive
// with runtime.KeepAlive until the C function has returned. The cell itself
// is heap-allocated and referenced until after the call.
type cell struct {
	i    int32
	_    int32
	u    uintptr
	args [maxArgs]uintptr
}

// do calls the C function fn with args (at most maxArgs) and returns its
// int result register.
func (k *cell) do(fn uintptr, args ...uintptr) uintptr {
	n := copy(k.args[:], args)
	r, _, _ := purego.SyscallN(fn, k.args[:n]...)
	return r
}

// spareCell recycles one cell per Lib. A concurrent caller that finds it
// taken allocates a fresh one, so it is safe under MPI_THREAD_MULTIPLE.
type spareCell struct{ p atomic.Pointer[cell] }

func (s *spareCell) get() *cell {
	if c := s.p.Swap(nil); c != nil {
		return c
	}
	return new(cell)
}

func (s *spareCell) put(c *cell) { s.p.Store(c) }

// forceHeap makes the memory p points to escape to the heap at every call
// site (it is a no-op at run time): the compiler moves a caller's local
// variable whose address reaches here to the heap, where it cannot move
// during the C call.
//
//go:uintptrescapes
//go:noinline
func forceHeap(p uintptr) {}

// forceHeap2 is forceHeap for two pointers.
//
//go:uintptrescapes
//go:noinline
func forceHeap2(p, q uintptr) {}
