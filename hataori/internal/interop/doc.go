// Package interop holds acceptance tests of Hataori sharing one MPI with
// other libraries in the same process. Its subdirectories are programs and
// test drivers, not APIs: mpi4py builds Hataori's mpi4py bridge (the C
// shared library of examples/mpi4py) that a Python program using mpi4py
// loads with ctypes, hands one of its own communicators to, and checks.
package interop
