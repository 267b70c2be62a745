package mpiabi_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
)

// A program initialises MPI from the main goroutine, which package main
// keeps on the initial thread with runtime.LockOSThread() in an init().
// Run it with MPI_RT_LIB set and the launcher of the wrapped MPI.
func Example() {
	lib, err := mpiabi.Load() // opens $MPI_RT_LIB
	if err != nil {
		log.Fatal(err)
	}
	if _, err := lib.InitThread(lib.ThreadFunneled); err != nil {
		log.Fatal(err)
	}
	defer lib.Finalize()
	if err := lib.CheckLauncher(lib.CommWorld); err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	size, _ := lib.CommSize(lib.CommWorld)

	// Signed MIN over int64.
	in, out := int64(-rank), int64(0)
	if err := lib.Allreduce(unsafe.Pointer(&in), unsafe.Pointer(&out), 1, lib.Int64, lib.Min, lib.CommWorld); err != nil {
		log.Fatal(err)
	}
	fmt.Println("rank", rank, "of", size, "min", out)
}

// Open reports every problem as a *LoadError naming the path, the stage and
// the symbol, wrapping a sentinel or the underlying error.
func ExampleOpen_error() {
	_, err := mpiabi.Open("/nonexistent/libmpiwrapper.so")
	var le *mpiabi.LoadError
	if errors.As(err, &le) {
		fmt.Println(le.Stage, le.Path, errors.Is(err, fs.ErrNotExist))
	}
	// Output: open /nonexistent/libmpiwrapper.so true
}

// Receiving a message of unknown size: probe, size the buffer with
// GetCount, then receive. Reusing one Status keeps the calls allocation-free.
func ExampleLib_Probe() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	st := new(mpiabi.Status)
	if err := lib.Probe(lib.AnySource, lib.AnyTag, lib.CommWorld, st); err != nil {
		log.Fatal(err)
	}
	n, err := lib.GetCount(st, lib.Byte)
	if err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, max(n, 1))
	if err := lib.Recv(unsafe.Pointer(&buf[0]), n, lib.Byte, int(st.Source), int(st.Tag), lib.CommWorld, st); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes from rank %d, tag %d\n", n, st.Source, st.Tag)
}

// A ping-pong between ranks 0 and 1.
func ExampleLib_Send() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	msg := make([]byte, 8)
	switch rank {
	case 0:
		_ = lib.Send(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, 1, 0, lib.CommWorld)
		_ = lib.Recv(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, 1, 0, lib.CommWorld, nil)
	case 1:
		_ = lib.Recv(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, 0, 0, lib.CommWorld, nil)
		_ = lib.Send(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, 0, 0, lib.CommWorld)
	}
}

// A wrapper started by the other MPI's launcher comes up as singletons;
// CheckLauncher turns that into a clear error.
func ExampleLib_CheckLauncher() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := lib.InitThread(lib.ThreadFunneled); err != nil {
		log.Fatal(err)
	}
	var le *mpiabi.LauncherError
	if err := lib.CheckLauncher(lib.CommWorld); errors.As(err, &le) {
		log.Fatalf("%s says %d ranks, MPI sees %d: %s", le.Var, le.LauncherSize, le.CommSize, le.Hint)
	}
}
