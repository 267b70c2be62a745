package mpiabi

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Symbols read to identify the library.
const (
	symVersionMajor = "mpiabi_version_major"
	symVersionMinor = "mpiabi_version_minor"
	symVersionPatch = "mpiabi_version_patch"
	symBuild        = "mpiwrapper_version"
	symVtable       = "mpiwrapper_get_vtable"
	symMPI5ABI      = "MPI_Abi_get_version" // only to refuse the MPI-5 ABI
)

// funcs holds the addresses of the library's functions.
type funcs struct {
	initThread, init, initialized, finalized, finalize uintptr
	queryThread, isThreadMain                          uintptr
	commDup, commFree, commRank, commSize              uintptr
	commSetErrhandler                                  uintptr
	send, recv, probe, iprobe, getCount                uintptr
	allreduce, bcast, barrier, abort                   uintptr
	isend, wait                                        uintptr // optional
	test, ibarrier, iallreduce, commIdup               uintptr // optional
	wtime, libraryVersion, errorString                 uintptr // optional
	wtimeFn                                            func() float64
}

// funcSym names a function symbol and where its address goes.
type funcSym struct {
	name     string
	optional bool
	dst      func(*funcs) *uintptr
}

// funcSyms lists every function this package calls, looked up before use.
var funcSyms = []funcSym{
	{"MPIABI_Init_thread", false, func(f *funcs) *uintptr { return &f.initThread }},
	{"MPIABI_Init", false, func(f *funcs) *uintptr { return &f.init }},
	{"MPIABI_Initialized", false, func(f *funcs) *uintptr { return &f.initialized }},
	{"MPIABI_Finalized", false, func(f *funcs) *uintptr { return &f.finalized }},
	{"MPIABI_Finalize", false, func(f *funcs) *uintptr { return &f.finalize }},
	{"MPIABI_Query_thread", false, func(f *funcs) *uintptr { return &f.queryThread }},
	{"MPIABI_Is_thread_main", false, func(f *funcs) *uintptr { return &f.isThreadMain }},
	{"MPIABI_Comm_dup", false, func(f *funcs) *uintptr { return &f.commDup }},
	{"MPIABI_Comm_free", false, func(f *funcs) *uintptr { return &f.commFree }},
	{"MPIABI_Comm_rank", false, func(f *funcs) *uintptr { return &f.commRank }},
	{"MPIABI_Comm_size", false, func(f *funcs) *uintptr { return &f.commSize }},
	{"MPIABI_Comm_set_errhandler", false, func(f *funcs) *uintptr { return &f.commSetErrhandler }},
	{"MPIABI_Send", false, func(f *funcs) *uintptr { return &f.send }},
	{"MPIABI_Recv", false, func(f *funcs) *uintptr { return &f.recv }},
	{"MPIABI_Probe", false, func(f *funcs) *uintptr { return &f.probe }},
	{"MPIABI_Iprobe", false, func(f *funcs) *uintptr { return &f.iprobe }},
	{"MPIABI_Get_count", false, func(f *funcs) *uintptr { return &f.getCount }},
	{"MPIABI_Allreduce", false, func(f *funcs) *uintptr { return &f.allreduce }},
	{"MPIABI_Bcast", false, func(f *funcs) *uintptr { return &f.bcast }},
	{"MPIABI_Barrier", false, func(f *funcs) *uintptr { return &f.barrier }},
	{"MPIABI_Abort", false, func(f *funcs) *uintptr { return &f.abort }},
	{"MPIABI_Isend", true, func(f *funcs) *uintptr { return &f.isend }},
	{"MPIABI_Wait", true, func(f *funcs) *uintptr { return &f.wait }},
	{"MPIABI_Test", true, func(f *funcs) *uintptr { return &f.test }},
	{"MPIABI_Ibarrier", true, func(f *funcs) *uintptr { return &f.ibarrier }},
	{"MPIABI_Iallreduce", true, func(f *funcs) *uintptr { return &f.iallreduce }},
	{"MPIABI_Comm_idup", true, func(f *funcs) *uintptr { return &f.commIdup }},
	{"MPIABI_Wtime", true, func(f *funcs) *uintptr { return &f.wtime }},
	{"MPIABI_Get_library_version", true, func(f *funcs) *uintptr { return &f.libraryVersion }},
	{"MPIABI_Error_string", true, func(f *funcs) *uintptr { return &f.errorString }},
}

// constKind says how many bytes a constant symbol holds.
type constKind int

const (
	kindHandle constKind = iota // uintptr_t
	kindInt                     // int
)

// constSym names a constant data symbol and where its value goes.
type constSym struct {
	name     string
	kind     constKind
	set      func(l *Lib, v uintptr)
	optional bool
}

// constSyms lists every constant read from the library.
var constSyms = []constSym{
	{"MPIABI_COMM_WORLD", kindHandle, func(l *Lib, v uintptr) { l.CommWorld = Comm(v) }, false},
	{"MPIABI_COMM_SELF", kindHandle, func(l *Lib, v uintptr) { l.CommSelf = Comm(v) }, false},
	{"MPIABI_COMM_NULL", kindHandle, func(l *Lib, v uintptr) { l.CommNull = Comm(v) }, false},
	{"MPIABI_BYTE", kindHandle, func(l *Lib, v uintptr) { l.Byte = Datatype(v) }, false},
	{"MPIABI_CHAR", kindHandle, func(l *Lib, v uintptr) { l.Char = Datatype(v) }, false},
	{"MPIABI_INT", kindHandle, func(l *Lib, v uintptr) { l.Int = Datatype(v) }, false},
	{"MPIABI_INT32_T", kindHandle, func(l *Lib, v uintptr) { l.Int32 = Datatype(v) }, false},
	{"MPIABI_INT64_T", kindHandle, func(l *Lib, v uintptr) { l.Int64 = Datatype(v) }, false},
	{"MPIABI_UINT64_T", kindHandle, func(l *Lib, v uintptr) { l.Uint64 = Datatype(v) }, false},
	{"MPIABI_DOUBLE", kindHandle, func(l *Lib, v uintptr) { l.Double = Datatype(v) }, false},
	{"MPIABI_FLOAT", kindHandle, func(l *Lib, v uintptr) { l.Float = Datatype(v) }, false},
	{"MPIABI_MIN", kindHandle, func(l *Lib, v uintptr) { l.Min = Op(v) }, false},
	{"MPIABI_MAX", kindHandle, func(l *Lib, v uintptr) { l.Max = Op(v) }, false},
	{"MPIABI_SUM", kindHandle, func(l *Lib, v uintptr) { l.Sum = Op(v) }, false},
	{"MPIABI_STATUS_IGNORE", kindHandle, func(l *Lib, v uintptr) { l.StatusIgnore = v }, false},
	{"MPIABI_ANY_SOURCE", kindInt, func(l *Lib, v uintptr) { l.AnySource = int(int32(v)) }, false},
	{"MPIABI_ANY_TAG", kindInt, func(l *Lib, v uintptr) { l.AnyTag = int(int32(v)) }, false},
	{"MPIABI_PROC_NULL", kindInt, func(l *Lib, v uintptr) { l.ProcNull = int(int32(v)) }, false},
	{"MPIABI_THREAD_SINGLE", kindInt, func(l *Lib, v uintptr) { l.ThreadSingle = int(int32(v)) }, false},
	{"MPIABI_THREAD_FUNNELED", kindInt, func(l *Lib, v uintptr) { l.ThreadFunneled = int(int32(v)) }, false},
	{"MPIABI_THREAD_SERIALIZED", kindInt, func(l *Lib, v uintptr) { l.ThreadSerialized = int(int32(v)) }, false},
	{"MPIABI_THREAD_MULTIPLE", kindInt, func(l *Lib, v uintptr) { l.ThreadMultiple = int(int32(v)) }, false},
	{"MPIABI_SUCCESS", kindInt, func(l *Lib, v uintptr) { l.Success = int(int32(v)) }, false},
	{"MPIABI_ERRORS_RETURN", kindHandle, func(l *Lib, v uintptr) { l.ErrorsReturn = Errhandler(v) }, false},
	{"MPIABI_REQUEST_NULL", kindHandle, func(l *Lib, v uintptr) { l.RequestNull = Request(v) }, true},
}

// ucxVar is set to "none" before loading unless the user has set it: UCX's
// own SIGSEGV handler would otherwise kill a Go process that recovers from a
// nil dereference.
const ucxVar = "UCX_HANDLE_ERRORS"

var (
	loadMu  sync.Mutex
	loadLib *Lib
)

// Load opens the library named by the MPI_RT_LIB environment variable (see
// Open). The first successful result is cached and returned by later calls;
// failures are not cached. An unset or empty variable gives a *LoadError with
// Stage "env" wrapping ErrNotSet.
func Load() (*Lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loadLib != nil {
		return loadLib, nil
	}
	path := os.Getenv(EnvVar)
	if path == "" {
		return nil, &LoadError{Var: EnvVar, Stage: "env",
			Err: fmt.Errorf("%w: %s is not set; set it to the path of an MPIABI 2.x library (a wrapper built by this project's scripts/build-wrappers.sh, or MPIwrapper's libmpiwrapper.so)", ErrNotSet, EnvVar)}
	}
	l, err := Open(path)
	if err != nil {
		if le, ok := err.(*LoadError); ok {
			le.Var = EnvVar
		}
		return nil, err
	}
	loadLib = l
	return l, nil
}

// Open loads the MPIABI 2.x library at path with RTLD_NOW|RTLD_GLOBAL (Open
// MPI's components need libmpi's symbols globally), checks that
// mpiabi_version_major is 2, looks up every function and constant it needs
// before using any, and reads the constants. It never calls MPI. Every
// failure is a *LoadError; nothing panics. A path without a slash is searched
// for by the dynamic loader.
func Open(path string) (*Lib, error) {
	if path == "" {
		return nil, &LoadError{Stage: "open", Err: fmt.Errorf("%w: empty library path", ErrNotSet)}
	}
	if _, ok := os.LookupEnv(ucxVar); !ok {
		_ = os.Setenv(ucxVar, "none")
	}
	if strings.Contains(path, "/") {
		if _, err := os.Stat(path); err != nil {
			return nil, &LoadError{Path: path, Stage: "open", Err: err}
		}
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, &LoadError{Path: path, Stage: "dlopen", Err: fmt.Errorf("not a loadable shared library: %w", err)}
	}
	l, lerr := bind(h, path)
	if lerr != nil {
		_ = purego.Dlclose(h)
		return nil, lerr
	}
	return l, nil
}

// bind identifies the library behind handle h and fills a Lib.
func bind(h uintptr, path string) (*Lib, *LoadError) {
	fail := func(stage, sym string, err error) *LoadError {
		return &LoadError{Path: path, Stage: stage, Symbol: sym, Err: err}
	}
	majorAddr, err := purego.Dlsym(h, symVersionMajor)
	if err != nil {
		if _, verr := purego.Dlsym(h, symVtable); verr == nil {
			return nil, fail("version", symVersionMajor, ErrVtableOnly)
		}
		if _, aerr := purego.Dlsym(h, symMPI5ABI); aerr == nil {
			return nil, fail("version", symVersionMajor, fmt.Errorf("%w: it exports %s, so it is an MPI-5 standard-ABI library (libmpi_abi.so) or a native MPI; this loader speaks MPIwrapper's MPIABI 2.x only", ErrNotMPIABI, symMPI5ABI))
		}
		return nil, fail("version", symVersionMajor, fmt.Errorf("%w; a native libmpi.so cannot be used directly, build a wrapper (scripts/build-wrappers.sh) or use MPIwrapper's libmpiwrapper.so", ErrNotMPIABI))
	}
	l := &Lib{Path: path, handle: h}
	l.VersionMajor = int(readInt32(majorAddr))
	if a, err := purego.Dlsym(h, symVersionMinor); err == nil {
		l.VersionMinor = int(readInt32(a))
	}
	if a, err := purego.Dlsym(h, symVersionPatch); err == nil {
		l.VersionPatch = int(readInt32(a))
	}
	if l.VersionMajor != 2 {
		return nil, fail("version", symVersionMajor, fmt.Errorf("%w: the library reports MPIABI %d.%d.%d", ErrVersion, l.VersionMajor, l.VersionMinor, l.VersionPatch))
	}
	if a, err := purego.Dlsym(h, symBuild); err == nil {
		l.Build = readCStringAt(a, 4096)
	}
	// Look every symbol up before using any.
	for _, s := range funcSyms {
		a, err := purego.Dlsym(h, s.name)
		if err != nil {
			if s.optional {
				continue
			}
			return nil, fail("dlsym", s.name, fmt.Errorf("%w: %v", ErrMissingSymbol, err))
		}
		*s.dst(&l.fn) = a
	}
	addrs := make([]uintptr, len(constSyms))
	for i, c := range constSyms {
		a, err := purego.Dlsym(h, c.name)
		if err != nil {
			if c.optional {
				continue
			}
			return nil, fail("dlsym", c.name, fmt.Errorf("%w: %v", ErrMissingSymbol, err))
		}
		addrs[i] = a
	}
	for i, c := range constSyms {
		if addrs[i] == 0 {
			continue
		}
		switch c.kind {
		case kindHandle:
			c.set(l, readUintptr(addrs[i]))
		case kindInt:
			c.set(l, uintptr(uint32(readInt32(addrs[i]))))
		}
	}
	if l.fn.wtime != 0 {
		purego.RegisterFunc(&l.fn.wtimeFn, l.fn.wtime)
	}
	return l, nil
}

// cptr turns an address obtained from the dynamic loader (memory outside
// the Go heap) into an unsafe.Pointer.
func cptr(addr uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&addr))
}

// readInt32 reads a C int data symbol.
func readInt32(addr uintptr) int32 { return *(*int32)(cptr(addr)) }

// readUintptr reads a handle or pointer data symbol.
func readUintptr(addr uintptr) uintptr { return *(*uintptr)(cptr(addr)) }

// readCStringAt reads the const char* stored at addr (a data symbol).
func readCStringAt(addr uintptr, limit int) string {
	return cString(readUintptr(addr), limit)
}

// cString copies a NUL-terminated C string of at most limit bytes.
func cString(p uintptr, limit int) string {
	if p == 0 {
		return ""
	}
	b := unsafe.Slice((*byte)(cptr(p)), limit)
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
