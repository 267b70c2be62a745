package mpiabi

import (
	"runtime"
	"unsafe"
)

// Nonblocking reports whether the library exports MPIABI_Test,
// MPIABI_Ibarrier and MPIABI_Iallreduce (every MPI-3 MPIABI library
// does), which Test, Ibarrier and Iallreduce need.
func (l *Lib) Nonblocking() bool {
	return l.fn.test != 0 && l.fn.ibarrier != 0 && l.fn.iallreduce != 0
}

// Test reports whether *req has completed (MPI_Test), filling st (nil:
// STATUS_IGNORE) when it has; a completed request is freed and *req set
// to the null request. It never blocks: a caller waiting for completion
// calls it in a loop, which also drives MPI's progress. It returns an
// error wrapping ErrMissingSymbol when the library lacks MPIABI_Test.
func (l *Lib) Test(req *Request, st *Status) (bool, error) {
	if l.fn.test == 0 {
		return false, l.missing("MPIABI_Test")
	}
	forceHeap(uintptr(unsafe.Pointer(st)))
	k := l.spare.get()
	k.u, k.i = uintptr(*req), 0
	r := k.do(l.fn.test, uintptr(unsafe.Pointer(&k.u)), uintptr(unsafe.Pointer(&k.i)), l.statusArg(st))
	done := k.i != 0
	*req = Request(k.u)
	l.spare.put(k)
	runtime.KeepAlive(st)
	return done, l.check("MPIABI_Test", r)
}

// Ibarrier starts a barrier on c (MPI_Ibarrier) and returns the request to
// complete with Test or Wait. It returns an error wrapping
// ErrMissingSymbol when the library lacks MPIABI_Ibarrier.
func (l *Lib) Ibarrier(c Comm) (Request, error) {
	if l.fn.ibarrier == 0 {
		return Request(l.RequestNull), l.missing("MPIABI_Ibarrier")
	}
	req, err := l.callHandle("MPIABI_Ibarrier", l.fn.ibarrier, uintptr(c))
	return Request(req), err
}

// Iallreduce starts combining count elements of dt from send on every rank
// with op into recv on every rank (MPI_Iallreduce) and returns the request
// to complete with Test or Wait. send and recv must be heap memory that
// stays untouched and referenced until the request completes. It returns
// an error wrapping ErrMissingSymbol when the library lacks
// MPIABI_Iallreduce.
func (l *Lib) Iallreduce(send, recv unsafe.Pointer, count int, dt Datatype, op Op, c Comm) (Request, error) {
	if l.fn.iallreduce == 0 {
		return Request(l.RequestNull), l.missing("MPIABI_Iallreduce")
	}
	forceHeap2(uintptr(send), uintptr(recv))
	req, err := l.callHandle("MPIABI_Iallreduce", l.fn.iallreduce, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), uintptr(c))
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return Request(req), err
}

// CommIdup starts duplicating c (MPI_Comm_idup) and returns the request to
// complete with Test or Wait; *newcomm holds the duplicate once the request
// has completed, and must stay heap memory, referenced and untouched, until
// then. It returns an error wrapping ErrMissingSymbol when the library
// lacks MPIABI_Comm_idup (HasCommIdup reports whether it has it).
func (l *Lib) CommIdup(c Comm, newcomm *Comm) (Request, error) {
	if l.fn.commIdup == 0 {
		return Request(l.RequestNull), l.missing("MPIABI_Comm_idup")
	}
	if newcomm == nil {
		return Request(l.RequestNull), &Error{Func: "MPIABI_Comm_idup", Code: -1, Text: "nil *Comm"}
	}
	forceHeap(uintptr(unsafe.Pointer(newcomm)))
	req, err := l.callHandle("MPIABI_Comm_idup", l.fn.commIdup, uintptr(c), uintptr(unsafe.Pointer(newcomm)))
	runtime.KeepAlive(newcomm)
	return Request(req), err
}

// HasCommIdup reports whether the library exports MPIABI_Comm_idup.
func (l *Lib) HasCommIdup() bool { return l.fn.commIdup != 0 }
