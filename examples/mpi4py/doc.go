// Command mpi4py is a C shared library that lets a Python program using
// mpi4py run hataori.Pmap on its own communicator; primes.py is that
// program. See README.md for the recipe:
//
//	go build -buildmode=c-shared -tags mpirt -o libprimes.so ./examples/mpi4py
//	MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI mpirun -n 2 python3 examples/mpi4py/primes.py ./libprimes.so
//
// The library exports PrimesBelow (exports.go) and LastError (bridge.go),
// built only with the tag mpirt or mpicgo; without either this is an empty
// program. It is Hataori's one mpi4py bridge: interop.go adds the hooks
// that Hataori's mpi4py acceptance test (hataori/internal/interop/mpi4py)
// builds this library for and drives. It never initialises or finalises
// MPI: mpi4py owns it.
package main

// main is required by -buildmode=c-shared and never runs in the library.
func main() {}
