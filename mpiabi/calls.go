package mpiabi

import (
	"runtime"
	"time"
	"unsafe"
)

// check turns an MPIABI return code into nil or an *Error.
func (l *Lib) check(name string, r uintptr) error {
	code := int(int32(r))
	if code == l.Success {
		return nil
	}
	return &Error{Func: name, Code: code, Text: l.errorString(code)}
}

// errorString asks the library for the text of an error code ("" if the
// library has no MPIABI_Error_string or the call fails).
func (l *Lib) errorString(code int) string {
	if l.fn.errorString == 0 {
		return ""
	}
	buf := make([]byte, 1024) // MPIABI_MAX_ERROR_STRING
	// The buffer must not live on the goroutine stack, which may move
	// while C writes into it.
	forceHeap(uintptr(unsafe.Pointer(&buf[0])))
	k := l.spare.get()
	k.i = 0
	r := k.do(l.fn.errorString, uintptr(code), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&k.i)))
	n := int(k.i)
	l.spare.put(k)
	runtime.KeepAlive(buf)
	if int(int32(r)) != l.Success || n < 0 || n > len(buf) {
		return ""
	}
	return string(buf[:n])
}

// missing reports an optional function the library does not export.
func (l *Lib) missing(sym string) error {
	return &LoadError{Path: l.Path, Stage: "dlsym", Symbol: sym, Err: ErrMissingSymbol}
}

// callInt calls fn(handle, &out) (or fn(&out) when withHandle is false)
// and returns out.
func (l *Lib) callInt(name string, fn uintptr, withHandle bool, h uintptr) (int, error) {
	k := l.spare.get()
	k.i = 0
	var r uintptr
	if withHandle {
		r = k.do(fn, h, uintptr(unsafe.Pointer(&k.i)))
	} else {
		r = k.do(fn, uintptr(unsafe.Pointer(&k.i)))
	}
	v := int(k.i)
	l.spare.put(k)
	return v, l.check(name, r)
}

// call calls fn(args...), which returns an MPI error code.
func (l *Lib) call(name string, fn uintptr, args ...uintptr) error {
	k := l.spare.get()
	r := k.do(fn, args...)
	l.spare.put(k)
	return l.check(name, r)
}

// callHandle calls fn(args..., &h), which returns an MPI error code and
// writes one handle h (a communicator or a request), and returns h.
func (l *Lib) callHandle(name string, fn uintptr, args ...uintptr) (uintptr, error) {
	k := l.spare.get()
	k.u = 0
	n := copy(k.args[:], args)
	k.args[n] = uintptr(unsafe.Pointer(&k.u))
	r := k.do(fn, k.args[:n+1]...)
	h := k.u
	l.spare.put(k)
	return h, l.check(name, r)
}

// InitThread initialises MPI asking for thread level required (one of
// l.Thread*) and returns the level provided (MPI_Init_thread). Call it from
// the main goroutine locked to its thread (see the package documentation).
func (l *Lib) InitThread(required int) (provided int, err error) {
	k := l.spare.get()
	k.i = 0
	r := k.do(l.fn.initThread, 0, 0, uintptr(required), uintptr(unsafe.Pointer(&k.i)))
	provided = int(k.i)
	l.spare.put(k)
	return provided, l.check("MPIABI_Init_thread", r)
}

// Init initialises MPI at the library's default thread level (MPI_Init).
func (l *Lib) Init() error {
	return l.call("MPIABI_Init", l.fn.init, 0, 0)
}

// Initialized reports whether MPI has been initialised (MPI_Initialized);
// it may be called at any time.
func (l *Lib) Initialized() (bool, error) {
	v, err := l.callInt("MPIABI_Initialized", l.fn.initialized, false, 0)
	return v != 0, err
}

// Finalized reports whether MPI has been finalised (MPI_Finalized); it may
// be called at any time.
func (l *Lib) Finalized() (bool, error) {
	v, err := l.callInt("MPIABI_Finalized", l.fn.finalized, false, 0)
	return v != 0, err
}

// Finalize shuts MPI down (MPI_Finalize).
func (l *Lib) Finalize() error {
	return l.call("MPIABI_Finalize", l.fn.finalize)
}

// QueryThread returns the thread level MPI provides (MPI_Query_thread).
func (l *Lib) QueryThread() (int, error) {
	return l.callInt("MPIABI_Query_thread", l.fn.queryThread, false, 0)
}

// IsThreadMain reports whether the calling OS thread is the one that
// initialised MPI (MPI_Is_thread_main).
func (l *Lib) IsThreadMain() (bool, error) {
	v, err := l.callInt("MPIABI_Is_thread_main", l.fn.isThreadMain, false, 0)
	return v != 0, err
}

// CommDup duplicates c (MPI_Comm_dup, collective over c).
func (l *Lib) CommDup(c Comm) (Comm, error) {
	d, err := l.callHandle("MPIABI_Comm_dup", l.fn.commDup, uintptr(c))
	return Comm(d), err
}

// CommFree frees *c and sets it to l.CommNull (MPI_Comm_free).
func (l *Lib) CommFree(c *Comm) error {
	if c == nil {
		return &Error{Func: "MPIABI_Comm_free", Code: -1, Text: "nil *Comm"}
	}
	forceHeap(uintptr(unsafe.Pointer(c)))
	err := l.call("MPIABI_Comm_free", l.fn.commFree, uintptr(unsafe.Pointer(c)))
	runtime.KeepAlive(c)
	return err
}

// CommRank returns the calling process's rank in c (MPI_Comm_rank).
func (l *Lib) CommRank(c Comm) (int, error) {
	return l.callInt("MPIABI_Comm_rank", l.fn.commRank, true, uintptr(c))
}

// CommSize returns the number of processes in c (MPI_Comm_size).
func (l *Lib) CommSize(c Comm) (int, error) {
	return l.callInt("MPIABI_Comm_size", l.fn.commSize, true, uintptr(c))
}

// CommSetErrhandler sets the error handler of c (MPI_Comm_set_errhandler),
// for example to l.ErrorsReturn, after which an MPI error in a call on c
// is returned as an *Error carrying MPI's error string instead of aborting
// the job.
func (l *Lib) CommSetErrhandler(c Comm, h Errhandler) error {
	return l.call("MPIABI_Comm_set_errhandler", l.fn.commSetErrhandler, uintptr(c), uintptr(h))
}

// Allreduce combines count elements of dt from send on every rank with op
// and stores the result in recv on every rank (MPI_Allreduce).
func (l *Lib) Allreduce(send, recv unsafe.Pointer, count int, dt Datatype, op Op, c Comm) error {
	forceHeap2(uintptr(send), uintptr(recv))
	err := l.call("MPIABI_Allreduce", l.fn.allreduce, uintptr(send), uintptr(recv), uintptr(count), uintptr(dt), uintptr(op), uintptr(c))
	runtime.KeepAlive(send)
	runtime.KeepAlive(recv)
	return err
}

// Bcast copies count elements of dt in buf from rank root to every rank of
// c (MPI_Bcast).
func (l *Lib) Bcast(buf unsafe.Pointer, count int, dt Datatype, root int, c Comm) error {
	forceHeap(uintptr(buf))
	err := l.call("MPIABI_Bcast", l.fn.bcast, uintptr(buf), uintptr(count), uintptr(dt), uintptr(root), uintptr(c))
	runtime.KeepAlive(buf)
	return err
}

// Barrier blocks until every rank of c has entered it (MPI_Barrier).
func (l *Lib) Barrier(c Comm) error {
	return l.call("MPIABI_Barrier", l.fn.barrier, uintptr(c))
}

// Abort terminates every process of c with exit code code (MPI_Abort). It
// normally does not return; an error means the library refused.
func (l *Lib) Abort(c Comm, code int) error {
	return l.call("MPIABI_Abort", l.fn.abort, uintptr(c), uintptr(code))
}

// processStart is the fallback epoch of Wtime.
var processStart = time.Now()

// Wtime returns MPI's wall-clock time in seconds (MPI_Wtime). When the
// library has no MPIABI_Wtime it returns the seconds since this package was
// initialised.
func (l *Lib) Wtime() float64 {
	if l.fn.wtimeFn != nil {
		return l.fn.wtimeFn()
	}
	return time.Since(processStart).Seconds()
}

// maxLibraryVersion is MPIABI_MAX_LIBRARY_VERSION_STRING.
const maxLibraryVersion = 8192

// LibraryVersion returns the library's version string
// (MPIABI_Get_library_version). Hataori's wrapper returns the wrapped
// MPI's own string (MPI_Get_library_version), e.g. "Open MPI v4.1.4, ..."
// or "MPICH Version:\t4.0.2\n..."; MPIwrapper puts a line of its own in
// front, "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:", and the
// wrapped MPI's string after it. launch.ParseVersion names the MPI under
// either. It may be called before Init.
func (l *Lib) LibraryVersion() (string, error) {
	if l.fn.libraryVersion == 0 {
		return "", l.missing("MPIABI_Get_library_version")
	}
	buf := make([]byte, maxLibraryVersion)
	// The buffer must not live on the goroutine stack, which may move
	// while C writes into it.
	forceHeap(uintptr(unsafe.Pointer(&buf[0])))
	k := l.spare.get()
	k.i = 0
	r := k.do(l.fn.libraryVersion, uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&k.i)))
	m := int(k.i)
	l.spare.put(k)
	runtime.KeepAlive(buf)
	if err := l.check("MPIABI_Get_library_version", r); err != nil {
		return "", err
	}
	if m < 0 || m > len(buf) {
		m = 0
	}
	// Some libraries count the terminating NUL.
	for m > 0 && buf[m-1] == 0 {
		m--
	}
	return string(buf[:m]), nil
}
