// Command mpi4py is a C shared library (go build -buildmode=c-shared) that
// runs Hataori's collective calls on a communicator handed over by mpi4py
// in the same process and the same MPI. It is the Go half of an acceptance
// test: testdata/mpi4py_interop.py initialises MPI through mpi4py, passes
// the handle of a communicator it duplicated to the exported functions
// (see exports.go), and checks their results; mpi4py_test.go builds the
// library and runs the script under Open MPI's mpirun.
//
// The library never initialises or finalises MPI: mpi4py owns it. Every
// exported function runs on the thread that calls it (a Go export called
// from C runs on the calling C thread), which for the collective calls
// must be the MPI main thread, the one that imported mpi4py.MPI.
//
// The exports exist only under the build tags mpirt or mpicgo; without
// either this is an empty program.
package main

// main is required by -buildmode=c-shared and never runs in the library.
func main() {}
