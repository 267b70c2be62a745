package hataori_test

import (
	"fmt"
	"log"

	"github.com/hataori/hataori-go/hataori"
)

// A program that lets Hataori initialise MPI locks its main goroutine to
// the main thread in an init function of package main:
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

// A communicator created by mpi4py (or another library on the same MPI in
// this process) is wrapped from its integer handle; Hataori never frees it.
func ExampleCommFromHandle() {
	var handle uintptr // e.g. MPI._handleof(comm) from mpi4py, passed in
	comm := hataori.CommFromHandle(handle)
	size, err := comm.Size()
	fmt.Println(size, err)
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
}
