package mpiabi_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/mpiabi/launch"
)

// These examples need MPI: a program started under mpirun with MPI_RT_LIB
// naming an MPIABI library. go test compiles them but does not run them
// (no Output comment); with -tags mpirt, TestExamplesMPI
// (example_mpi_test.go) runs them on 2 ranks under the multi-rank harness
// and checks what each rank prints. Most assume MPI is already initialised,
// as after the package example's InitThread.

// Load opens the library named by MPI_RT_LIB once; later calls return the
// same *Lib.
func ExampleLoad() {
	lib, err := mpiabi.Load()
	if errors.Is(err, mpiabi.ErrNotSet) {
		log.Fatal("set MPI_RT_LIB to an MPIABI library, e.g. build/wrappers/libmpiabi-openmpi.so")
	}
	if err != nil {
		log.Fatal(err) // a *LoadError naming the path, the stage and the symbol
	}
	again, _ := mpiabi.Load()
	fmt.Println("MPIABI major version", lib.VersionMajor, "cached:", again == lib)
}

// LibraryVersion names the MPI under the wrapper; it works before Init.
// launch.ParseVersion reads it whichever wrapper wrote it (Hataori's
// passes the MPI's own string through, MPIwrapper puts a line of its own
// first).
func ExampleLib_LibraryVersion() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	v, err := lib.LibraryVersion()
	if err != nil {
		log.Fatal(err)
	}
	switch mpi := launch.ParseVersion(v); mpi.Family {
	case launch.OpenMPI:
		fmt.Println("wraps Open MPI: start with Open MPI's mpirun")
	case launch.MPICH:
		fmt.Println("wraps MPICH: start with mpiexec.mpich")
	default:
		fmt.Println("wraps", mpi.MPI)
	}
}

// Init starts MPI at the library's default thread level, unless someone
// else (mpi4py, a test harness) already did.
func ExampleLib_Init() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	if up, _ := lib.Initialized(); !up {
		if err := lib.Init(); err != nil {
			log.Fatal(err)
		}
		defer lib.Finalize()
	}
	size, _ := lib.CommSize(lib.CommWorld)
	fmt.Println("MPI is up with", size, "ranks")
}

// InitThread asks for a thread level and returns what MPI provides, which
// may be less: check it.
func ExampleLib_InitThread() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	var provided int
	if up, _ := lib.Initialized(); up {
		provided, err = lib.QueryThread() // the level in force
	} else {
		provided, err = lib.InitThread(lib.ThreadFunneled)
		defer lib.Finalize()
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("at least FUNNELED:", provided >= lib.ThreadFunneled)
}

func ExampleLib_Initialized() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	up, err := lib.Initialized() // callable at any time
	fmt.Println("initialised:", up, err)
}

func ExampleLib_Finalized() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	done, err := lib.Finalized() // callable at any time, even after Finalize
	fmt.Println("finalised:", done, err)
}

// Finalize is the last MPI call of a program that initialised MPI, on the
// thread that did (package main locks it in init).
func ExampleLib_Finalize() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	if _, err := lib.InitThread(lib.ThreadFunneled); err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	// … the program's MPI work …
	if err := lib.Finalize(); err != nil {
		log.Fatal(err)
	}
	done, _ := lib.Finalized()
	fmt.Println("rank", rank, "finalised:", done)
}

// QueryThread reports the thread level in force.
func ExampleLib_QueryThread() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	level, err := lib.QueryThread()
	if err != nil {
		log.Fatal(err)
	}
	if level < lib.ThreadFunneled {
		fmt.Println("only the main thread may even run: MPI_THREAD_SINGLE")
		return
	}
	fmt.Println("other threads may run while the main thread calls MPI")
}

// Only the thread that initialised MPI is its main thread; another locked
// goroutine is not. (A goroutine that locks its thread and calls the
// library unlocks it before it ends.)
func ExampleLib_IsThreadMain() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	here, _ := lib.IsThreadMain()
	other := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ok, _ := lib.IsThreadMain()
		other <- ok
	}()
	fmt.Println("main thread:", here, "other thread:", <-other)
}

func ExampleLib_CommRank() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, err := lib.CommRank(lib.CommWorld)
	if err != nil {
		log.Fatal(err)
	}
	self, _ := lib.CommRank(lib.CommSelf)
	fmt.Println("world rank", rank, "self rank", self)
}

func ExampleLib_CommSize() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	size, err := lib.CommSize(lib.CommWorld)
	if err != nil {
		log.Fatal(err)
	}
	if rank, _ := lib.CommRank(lib.CommWorld); rank == 0 {
		fmt.Println(size, "ranks")
	}
}

// A library keeps its traffic apart on a duplicate of the caller's
// communicator, and frees it when done.
func ExampleLib_CommDup() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	private, err := lib.CommDup(lib.CommWorld) // collective
	if err != nil {
		log.Fatal(err)
	}
	defer lib.CommFree(&private)
	size, _ := lib.CommSize(private)
	fmt.Println("private communicator of", size, "ranks, distinct:", private != lib.CommWorld)
}

func ExampleLib_CommFree() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	c, err := lib.CommDup(lib.CommWorld)
	if err != nil {
		log.Fatal(err)
	}
	if err := lib.CommFree(&c); err != nil { // collective, like CommDup
		log.Fatal(err)
	}
	fmt.Println("handle reset to CommNull:", c == lib.CommNull)
}

// With ErrorsReturn set, an MPI error on the communicator is returned as an
// *Error instead of aborting the job: here a send to a rank that does not
// exist.
func ExampleLib_CommSetErrhandler() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	c, err := lib.CommDup(lib.CommWorld)
	if err != nil {
		log.Fatal(err)
	}
	defer lib.CommFree(&c)
	if err := lib.CommSetErrhandler(c, lib.ErrorsReturn); err != nil {
		log.Fatal(err)
	}
	var b [1]byte
	err = lib.Send(unsafe.Pointer(&b[0]), 1, lib.Byte, 99, 0, c)
	var e *mpiabi.Error
	if errors.As(err, &e) {
		fmt.Println(e.Func, "failed, code", e.Code != lib.Success)
	}
}

func ExampleLib_Barrier() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	start := lib.Wtime()
	if err := lib.Barrier(lib.CommWorld); err != nil {
		log.Fatal(err)
	}
	if rank, _ := lib.CommRank(lib.CommWorld); rank == 0 {
		fmt.Println("every rank arrived; waited", lib.Wtime()-start >= 0)
	}
}

// Bcast copies the root's buffer into every rank's.
func ExampleLib_Bcast() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	params := make([]float64, 3)
	if rank == 0 {
		copy(params, []float64{0.25, 0.5, 1})
	}
	if err := lib.Bcast(unsafe.Pointer(&params[0]), len(params), lib.Double, 0, lib.CommWorld); err != nil {
		log.Fatal(err)
	}
	fmt.Println("rank", rank, "params", params)
}

// Allreduce combines a value from every rank and gives the result to all.
func ExampleLib_Allreduce() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	in, sum := int64(rank+1), int64(0)
	if err := lib.Allreduce(unsafe.Pointer(&in), unsafe.Pointer(&sum), 1, lib.Int64, lib.Sum, lib.CommWorld); err != nil {
		log.Fatal(err)
	}
	fmt.Println("rank", rank, "sum", sum)
}

// Recv fills a Status: who sent the message, with which tag.
func ExampleLib_Recv() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	v := []int64{0, 0, 0}
	switch rank {
	case 0:
		v = []int64{-1, 2, -3}
		err = lib.Send(unsafe.Pointer(&v[0]), len(v), lib.Int64, 1, 5, lib.CommWorld)
	case 1:
		var st mpiabi.Status
		err = lib.Recv(unsafe.Pointer(&v[0]), len(v), lib.Int64, lib.AnySource, lib.AnyTag, lib.CommWorld, &st)
		fmt.Println("from rank", st.Source, "tag", st.Tag, v)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// GetCount tells how much of the buffer a message filled.
func ExampleLib_GetCount() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	buf := make([]byte, 64)
	switch rank {
	case 0:
		n := copy(buf, "short")
		err = lib.Send(unsafe.Pointer(&buf[0]), n, lib.Byte, 1, 0, lib.CommWorld)
	case 1:
		var st mpiabi.Status
		if err = lib.Recv(unsafe.Pointer(&buf[0]), len(buf), lib.Byte, 0, 0, lib.CommWorld, &st); err == nil {
			n, _ := lib.GetCount(&st, lib.Byte)
			fmt.Printf("%d bytes: %q\n", n, buf[:n])
		}
	}
	if err != nil {
		log.Fatal(err)
	}
}

// Iprobe checks for a message without blocking, so a loop can do other
// work until one arrives.
func ExampleLib_Iprobe() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	msg := []byte("done")
	switch rank {
	case 1:
		err = lib.Send(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, 0, 1, lib.CommWorld)
	case 0:
		st := new(mpiabi.Status)
		for {
			ok, err := lib.Iprobe(lib.AnySource, 1, lib.CommWorld, st)
			if err != nil {
				log.Fatal(err)
			}
			if ok {
				break
			}
			runtime.Gosched() // … other work …
		}
		err = lib.Recv(unsafe.Pointer(&msg[0]), len(msg), lib.Byte, int(st.Source), 1, lib.CommWorld, nil)
		fmt.Printf("rank 0 got %q from rank %d\n", msg, st.Source)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// A message to the own rank: start the send with Isend, receive, then Wait
// (a blocking Send to oneself may never complete).
func ExampleLib_Isend() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	out, in := []int32{int32(rank) * 10}, []int32{0}
	req, err := lib.Isend(unsafe.Pointer(&out[0]), 1, lib.Int32, rank, 2, lib.CommWorld)
	if err != nil {
		log.Fatal(err)
	}
	if err := lib.Recv(unsafe.Pointer(&in[0]), 1, lib.Int32, rank, 2, lib.CommWorld, nil); err != nil {
		log.Fatal(err)
	}
	if err := lib.Wait(req, nil); err != nil { // out stays untouched until here
		log.Fatal(err)
	}
	runtime.KeepAlive(out)
	fmt.Println("rank", rank, "sent itself", in[0])
}

// Wait completes a nonblocking send; its Status describes the request.
func ExampleLib_Wait() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	rank, _ := lib.CommRank(lib.CommWorld)
	size, _ := lib.CommSize(lib.CommWorld)
	token := []byte{byte(rank)}
	req, err := lib.Isend(unsafe.Pointer(&token[0]), 1, lib.Byte, (rank+1)%size, 4, lib.CommWorld)
	if err != nil {
		log.Fatal(err)
	}
	got := []byte{0}
	if err := lib.Recv(unsafe.Pointer(&got[0]), 1, lib.Byte, (rank+size-1)%size, 4, lib.CommWorld, nil); err != nil {
		log.Fatal(err)
	}
	if err := lib.Wait(req, nil); err != nil {
		log.Fatal(err)
	}
	runtime.KeepAlive(token)
	fmt.Println("rank", rank, "got the token of rank", got[0])
}

func ExampleLib_Wtime() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	start := lib.Wtime()
	_ = lib.Barrier(lib.CommWorld)
	fmt.Println("seconds are non-negative:", lib.Wtime()-start >= 0)
}

// Abort ends every process of the job with an exit code, the way out when
// one rank cannot go on and the others would wait for it forever.
func ExampleLib_Abort() {
	lib, err := mpiabi.Load()
	if err != nil {
		log.Fatal(err)
	}
	if rank, _ := lib.CommRank(lib.CommWorld); rank == 1 {
		fmt.Fprintln(os.Stderr, "rank 1: input missing, aborting the job")
		// MPICH's launcher tears down its output forwarding as soon as
		// the abort reaches it; give it a moment to pass the message on.
		time.Sleep(100 * time.Millisecond)
		lib.Abort(lib.CommWorld, 3)
	}
	_ = lib.Barrier(lib.CommWorld) // rank 0 waits here until the abort ends it
}
