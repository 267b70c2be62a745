// Package mpiabi is a small MPI binding that loads an MPIABI 2.x library at
// run time with purego: MPItrampoline's MPIwrapper (libmpiwrapper.so) or the
// wrapper built by this repository's scripts/build-wrappers.sh, which both
// export MPIABI_* functions and constants over a native MPI (Open MPI or
// MPICH). A program using it builds with CGO_ENABLED=0, without a C compiler,
// MPI headers or libmpi.
//
// # Usage
//
//	func init() { runtime.LockOSThread() } // in package main: keep main on the MPI thread
//
//	func main() {
//		lib, err := mpiabi.Load() // opens $MPI_RT_LIB
//		if err != nil {
//			log.Fatal(err) // a *mpiabi.LoadError naming variable, path, stage, symbol
//		}
//		if _, err := lib.InitThread(lib.ThreadFunneled); err != nil {
//			log.Fatal(err)
//		}
//		defer lib.Finalize()
//		if err := lib.CheckLauncher(lib.CommWorld); err != nil {
//			log.Fatal(err) // wrapper and mpirun from different MPIs
//		}
//		rank, _ := lib.CommRank(lib.CommWorld)
//		v := int64(-rank)
//		lib.Allreduce(unsafe.Pointer(&v), unsafe.Pointer(&v), 1, lib.Int64, lib.Min, lib.CommWorld)
//	}
//
// Run it with the launcher of the MPI the library wraps, e.g.
// MPI_RT_LIB=build/wrappers/libmpiabi-openmpi.so mpirun -n 4 ./prog, or
// MPI_RT_LIB=build/wrappers/libmpiabi-mpich.so mpiexec.mpich -n 4 ./prog.
//
// # Threads
//
// Go moves goroutines between OS threads, while MPI (at
// MPI_THREAD_FUNNELED, the usual level) must be called from the thread that
// initialised it. A program that uses MPI therefore calls
// runtime.LockOSThread() in an init() function of package main, so that the
// main goroutine stays on the initial thread, and makes every MPI call from
// the main goroutine. IsThreadMain reports whether the caller is on that
// thread.
//
// Another goroutine that locks its thread and calls into the library must
// call runtime.UnlockOSThread before it returns: in cgo-enabled builds (for
// example go test -race), a locked thread that made a purego call and then
// exits has been seen to crash the process here (Go issue 80723).
//
// # Loading
//
// Open and Load dlopen the library with RTLD_NOW|RTLD_GLOBAL, check that
// mpiabi_version_major is 2, look up every MPIABI_* symbol before using
// any, and read every constant (handles, wildcards, thread levels, the
// STATUS_IGNORE sentinel) from the library: the values differ between
// Open MPI and MPICH and none is hard-coded. They never look up MPI_* names,
// which would silently resolve to the native library underneath with an
// incompatible status layout. Every failure is a *LoadError naming the
// variable, the path, the stage and the symbol, wrapping ErrNotSet,
// ErrNotMPIABI, ErrVersion, ErrMissingSymbol or ErrVtableOnly.
//
// Before loading, Open sets UCX_HANDLE_ERRORS=none when it is unset: MPICH
// (and Open MPI) built with UCX otherwise install a SIGSEGV handler that
// kills a Go process even when Go would recover the fault (a nil pointer
// dereference turned into a panic). Set the variable yourself to override.
//
// # Performance
//
// Send, Recv, Probe, Iprobe, GetCount, Isend and Wait call cached function
// pointers through purego.SyscallN and do not allocate when the caller
// reuses its buffers and Status. Buffers are passed to C as raw memory and
// must not contain Go pointers; memory passed to a call is moved to the heap
// by the compiler, so that it cannot move while C uses it.
//
// A blocking Send to the caller's own rank may never complete (it hangs with
// MPICH over UCX); Isend, then Recv, then Wait works with both MPIs. Isend
// and Wait (and Wtime, LibraryVersion, MPI_Error_string texts) are optional
// symbols: a library without them still loads.
//
// # Dynamic linking
//
// A CGO_ENABLED=0 binary using this package is still dynamically linked: it
// needs the system's dynamic loader (ld.so) and libc at run time to dlopen
// the MPIABI library, which in turn needs the native MPI it was built
// against.
package mpiabi
