// Package mpi4py is the acceptance test of Hataori's collective calls on a
// communicator handed over by mpi4py in the same process and the same MPI.
// It holds no code of its own: mpi4py_test.go builds Hataori's one mpi4py
// bridge, the C shared library of examples/mpi4py (whose interop.go holds
// the test's exports), and runs testdata/mpi4py_interop.py under Open
// MPI's mpirun; the script initialises MPI through mpi4py, passes the
// handle of a communicator it duplicated to the exported functions, and
// checks their results.
//
// The library never initialises or finalises MPI: mpi4py owns it. Every
// exported function runs on the thread that calls it (a Go export called
// from C runs on the calling C thread), which for the collective calls
// must be the MPI main thread, the one that imported mpi4py.MPI.
package mpi4py
