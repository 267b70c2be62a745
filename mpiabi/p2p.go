package mpiabi

import (
	"runtime"
	"unsafe"
)

// The point-to-point calls below are the hot paths: they do not allocate
// when the caller reuses its buffers and Status (see cell for how Go
// pointers are passed safely). Buffers must not contain Go pointers: MPI
// sees raw bytes.

// statusArg returns the C argument for st: its address, or the library's
// STATUS_IGNORE for nil. The caller must have called forceHeap on st and
// keep it alive until the call returns.
func (l *Lib) statusArg(st *Status) uintptr {
	if st == nil {
		return l.StatusIgnore
	}
	return uintptr(unsafe.Pointer(st))
}

// Send sends count elements of dt from buf to rank dest with tag on c
// (MPI_Send). buf may be nil when count is 0. A blocking send to the
// caller's own rank may never complete (MPICH over UCX); use Isend for that.
func (l *Lib) Send(buf unsafe.Pointer, count int, dt Datatype, dest, tag int, c Comm) error {
	forceHeap(uintptr(buf))
	k := l.spare.get()
	r := k.do(l.fn.send, uintptr(buf), uintptr(count), uintptr(dt), uintptr(dest), uintptr(tag), uintptr(c))
	l.spare.put(k)
	runtime.KeepAlive(buf)
	return l.check("MPIABI_Send", r)
}

// Recv receives at most count elements of dt into buf from rank src (or
// l.AnySource) with tag (or l.AnyTag) on c (MPI_Recv). st receives the
// status; a nil st passes the library's STATUS_IGNORE.
func (l *Lib) Recv(buf unsafe.Pointer, count int, dt Datatype, src, tag int, c Comm, st *Status) error {
	forceHeap2(uintptr(buf), uintptr(unsafe.Pointer(st)))
	k := l.spare.get()
	r := k.do(l.fn.recv, uintptr(buf), uintptr(count), uintptr(dt), uintptr(src), uintptr(tag), uintptr(c), l.statusArg(st))
	l.spare.put(k)
	runtime.KeepAlive(buf)
	runtime.KeepAlive(st)
	return l.check("MPIABI_Recv", r)
}

// Probe blocks until a message from src with tag is available on c
// (MPI_Probe) and fills st (nil: STATUS_IGNORE). Keep st intact for GetCount.
func (l *Lib) Probe(src, tag int, c Comm, st *Status) error {
	forceHeap(uintptr(unsafe.Pointer(st)))
	k := l.spare.get()
	r := k.do(l.fn.probe, uintptr(src), uintptr(tag), uintptr(c), l.statusArg(st))
	l.spare.put(k)
	runtime.KeepAlive(st)
	return l.check("MPIABI_Probe", r)
}

// Iprobe reports whether a message from src with tag is available on c
// (MPI_Iprobe); when it is, st (if not nil) is filled.
func (l *Lib) Iprobe(src, tag int, c Comm, st *Status) (bool, error) {
	forceHeap(uintptr(unsafe.Pointer(st)))
	k := l.spare.get()
	k.i = 0
	r := k.do(l.fn.iprobe, uintptr(src), uintptr(tag), uintptr(c), uintptr(unsafe.Pointer(&k.i)), l.statusArg(st))
	flag := k.i != 0
	l.spare.put(k)
	runtime.KeepAlive(st)
	return flag, l.check("MPIABI_Iprobe", r)
}

// GetCount returns the number of dt elements in the message described by st
// (MPI_Get_count), which must come from Recv, Probe or Iprobe unmodified.
// It returns MPI_UNDEFINED's value when the size is not a whole number of
// elements.
func (l *Lib) GetCount(st *Status, dt Datatype) (int, error) {
	if st == nil {
		return 0, ErrNilStatus
	}
	forceHeap(uintptr(unsafe.Pointer(st)))
	k := l.spare.get()
	k.i = 0
	r := k.do(l.fn.getCount, uintptr(unsafe.Pointer(st)), uintptr(dt), uintptr(unsafe.Pointer(&k.i)))
	n := int(k.i)
	l.spare.put(k)
	runtime.KeepAlive(st)
	return n, l.check("MPIABI_Get_count", r)
}

// Request is an MPIABI request handle for a nonblocking operation.
type Request uintptr

// Isend starts sending count elements of dt from buf to rank dest with tag
// on c (MPI_Isend) and returns the request to complete with Wait. buf must
// stay untouched (and referenced) until Wait returns. It returns an error
// wrapping ErrMissingSymbol when the library lacks MPIABI_Isend.
func (l *Lib) Isend(buf unsafe.Pointer, count int, dt Datatype, dest, tag int, c Comm) (Request, error) {
	if l.fn.isend == 0 {
		return Request(l.RequestNull), l.missing("MPIABI_Isend")
	}
	forceHeap(uintptr(buf))
	req, err := l.callHandle("MPIABI_Isend", l.fn.isend, uintptr(buf), uintptr(count), uintptr(dt), uintptr(dest), uintptr(tag), uintptr(c))
	runtime.KeepAlive(buf)
	return Request(req), err
}

// Wait blocks until req completes (MPI_Wait) and fills st (nil:
// STATUS_IGNORE). The request is freed; do not wait on it again.
func (l *Lib) Wait(req Request, st *Status) error {
	if l.fn.wait == 0 {
		return l.missing("MPIABI_Wait")
	}
	forceHeap(uintptr(unsafe.Pointer(st)))
	k := l.spare.get()
	k.u = uintptr(req)
	r := k.do(l.fn.wait, uintptr(unsafe.Pointer(&k.u)), l.statusArg(st))
	l.spare.put(k)
	runtime.KeepAlive(st)
	return l.check("MPIABI_Wait", r)
}
