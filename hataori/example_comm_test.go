package hataori_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/hataori/hataori-go/hataori"
)

// The examples that need MPI have no Output comment: go test compiles them
// but does not run them, since they need a build with -tags mpirt or
// mpicgo started under mpirun. TestExamplesMPI (example_mpi_test.go) runs
// each of them on 2 ranks under the multi-rank harness, with each MPI, and
// checks the lines they print.

// InitThread makes its caller the MPI main thread and, when it initialises
// MPI, locks it to its OS thread. A program may also lock its main
// goroutine to the process's main thread in an init function of package
// main, which some MPI libraries and tools prefer:
//
//	func init() { runtime.LockOSThread() }
//
// and then, in main:
func ExampleInitThread() {
	provided, err := hataori.InitThread(hataori.ThreadFunneled)
	if err != nil {
		log.Fatal(err)
	}
	defer hataori.Finalize() // does nothing if someone else initialised MPI
	if provided < hataori.ThreadFunneled {
		log.Fatalf("MPI provides only %v", provided)
	}
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	size, _ := world.Size()
	fmt.Printf("rank %d of %d (%s backend)\n", rank, size, hataori.Backend())
}

// Finalize ends MPI if InitThread started it. Call it last, from the MPI
// main thread; a second call, or a call in a program where someone else
// (mpi4py, a C library) initialised MPI, does nothing.
func ExampleFinalize() {
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		log.Fatal(err)
	}
	// … Pmap, Broadcast, Scatter, Gather …
	if err := hataori.Finalize(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("again:", hataori.Finalize())
}

// Code that may run before or after MPI is up asks Initialized first.
func ExampleInitialized() {
	up, err := hataori.Initialized()
	switch {
	case errors.Is(err, hataori.ErrNoMPI):
		fmt.Println("built without MPI: local calls only")
	case err != nil:
		log.Fatal(err) // under mpirt: MPI_RT_LIB names no MPIABI library
	case up:
		fmt.Println("MPI is initialised")
	default:
		fmt.Println("MPI is not initialised yet: call InitThread")
	}
}

// Backend names the MPI backend compiled into the program.
func ExampleBackend() {
	if hataori.Backend() == "none" {
		fmt.Println("no MPI: rebuild with -tags mpirt or -tags mpicgo")
		return
	}
	fmt.Println("backend", hataori.Backend())
}

// World is the communicator of every process of the job. Without an MPI
// backend it returns ErrNoMPI, which a program can take as "run locally".
func ExampleWorld() {
	world, err := hataori.World()
	if errors.Is(err, hataori.ErrNoMPI) {
		fmt.Println("no MPI: running locally")
		return
	}
	if err != nil {
		log.Fatal(err) // ErrNotInitialized before InitThread
	}
	size, err := world.Size()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("world of", size, "processes")
}

func ExampleComm_Rank() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, err := world.Rank()
	if err != nil {
		log.Fatal(err)
	}
	if rank == 0 {
		fmt.Println("rank 0 is the usual root")
	}
}

func ExampleComm_Size() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	size, err := world.Size()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	if rank == size-1 {
		fmt.Printf("rank %d is the last of %d\n", rank, size)
	}
}

// The caller's own messages use the same Comm as Hataori's collective
// calls; Hataori works on private duplicates, so they never mix.
func ExampleComm_Send() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	switch rank {
	case 0:
		if err := world.Send([]byte("ping"), 1, 7); err != nil {
			log.Fatal(err)
		}
	case 1:
		buf := make([]byte, 64)
		n, err := world.Recv(buf, hataori.AnySource, 7)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("got %q\n", buf[:n])
	}
}

// Recv takes a message from any rank with AnySource; the buffer must be
// large enough for it.
func ExampleComm_Recv() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := world.Rank()
	size, _ := world.Size()
	if rank != 0 {
		msg := fmt.Sprintf("hello from rank %d", rank)
		if err := world.Send([]byte(msg), 0, 3); err != nil {
			log.Fatal(err)
		}
		return
	}
	buf := make([]byte, 256)
	for range size - 1 {
		n, err := world.Recv(buf, hataori.AnySource, hataori.AnyTag)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("rank 0 got %q\n", buf[:n])
	}
}

// Barrier holds every rank until all have reached it, for example before
// timing a phase.
func ExampleComm_Barrier() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	if err := world.Barrier(); err != nil {
		log.Fatal(err)
	}
	if rank, _ := world.Rank(); rank == 0 {
		fmt.Println("every rank reached the barrier")
	}
}

// A private communicator for a library's own traffic.
func ExampleComm_Dup() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	private, err := world.Dup()
	if err != nil {
		log.Fatal(err)
	}
	defer private.Free()
	if err := private.Barrier(); err != nil {
		log.Fatal(err)
	}
	if rank, _ := private.Rank(); rank == 0 {
		size, _ := private.Size()
		fmt.Println("a private communicator of", size, "ranks")
	}
}

// Free releases what Dup created, and only that. Copies of a Comm share
// it: after Free every copy is invalid.
func ExampleComm_Free() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	dup, err := world.Dup()
	if err != nil {
		log.Fatal(err)
	}
	kept := dup                        // a copy, e.g. stored in a struct
	if err := dup.Free(); err != nil { // collective, like Dup
		log.Fatal(err)
	}
	_, err = kept.Size()
	fmt.Println("after Free:", errors.Is(err, hataori.ErrInvalidComm))
	fmt.Println("Free(world):", errors.Is(world.Free(), hataori.ErrNotFreeable))
}

// Handle gives the integer another library in the same process (mpi4py,
// a C library) takes for the same communicator.
func ExampleComm_Handle() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	h := world.Handle() // pass it on, e.g. to C as an MPI_Comm
	same := hataori.CommFromHandle(h)
	fmt.Println("same handle:", same.Handle() == h)
}

// A communicator created by mpi4py (or another library on the same MPI in
// this process) is wrapped from its integer handle; Hataori never frees it.
func ExampleCommFromHandle() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	var handle uintptr = world.Handle() // in practice passed in: comm.handle in mpi4py 4, MPI._handleof(comm) in 3.x
	comm := hataori.CommFromHandle(handle)
	size, err := comm.Size()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("borrowed communicator of", size, "ranks; Free refused:", errors.Is(comm.Free(), hataori.ErrNotFreeable))
}

// An MPI failure on a communicator Hataori owns (one from Dup, or World
// when InitThread initialised MPI) comes back as an *MPIError: here a
// message longer than the receive buffer.
func ExampleMPIError() {
	world, err := hataori.World()
	if err != nil {
		log.Fatal(err)
	}
	comm, err := world.Dup() // MPI_ERRORS_RETURN
	if err != nil {
		log.Fatal(err)
	}
	defer comm.Free()
	switch rank, _ := comm.Rank(); rank {
	case 0:
		if err := comm.Send([]byte("twelve bytes"), 1, 0); err != nil {
			log.Fatal(err)
		}
	case 1:
		_, err := comm.Recv(make([]byte, 4), 0, 0)
		var me *hataori.MPIError
		if errors.As(err, &me) {
			fmt.Println(me.Func, "failed:", errors.Is(err, hataori.ErrMPI))
		}
	}
}
