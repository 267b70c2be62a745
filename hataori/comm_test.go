package hataori_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestCommNoMPI checks the build without an MPI backend.
func TestCommNoMPI(t *testing.T) {
	if hataori.Backend() != "none" {
		t.Skipf("backend %s has MPI", hataori.Backend())
	}
	if _, err := hataori.World(); !errors.Is(err, hataori.ErrNoMPI) {
		t.Errorf("World = %v, want ErrNoMPI", err)
	}
	if _, err := hataori.InitThread(hataori.ThreadFunneled); !errors.Is(err, hataori.ErrNoMPI) {
		t.Errorf("InitThread = %v, want ErrNoMPI", err)
	}
	if _, err := hataori.Initialized(); !errors.Is(err, hataori.ErrNoMPI) {
		t.Errorf("Initialized = %v, want ErrNoMPI", err)
	}
	if err := hataori.Finalize(); !errors.Is(err, hataori.ErrNoMPI) {
		t.Errorf("Finalize = %v, want ErrNoMPI", err)
	}
	c := hataori.CommFromHandle(42)
	if c.Handle() != 42 {
		t.Errorf("Handle = %d, want 42", c.Handle())
	}
	if _, err := c.Rank(); !errors.Is(err, hataori.ErrNoMPI) {
		t.Errorf("Rank = %v, want ErrNoMPI", err)
	}
	if err := c.Send(nil, 0, 0); !errors.Is(err, hataori.ErrNoMPI) {
		t.Errorf("Send = %v, want ErrNoMPI", err)
	}
}

// TestCommInvalid checks errors that need no MPI call.
func TestCommInvalid(t *testing.T) {
	want := hataori.ErrInvalidComm
	if hataori.Backend() == "none" {
		want = hataori.ErrNoMPI
	}
	var zero hataori.Comm
	if zero.Handle() != 0 {
		t.Errorf("zero Comm Handle = %d", zero.Handle())
	}
	if _, err := zero.Size(); !errors.Is(err, want) {
		t.Errorf("zero Size = %v, want %v", err, want)
	}
	if _, err := zero.Dup(); !errors.Is(err, want) {
		t.Errorf("zero Dup = %v, want %v", err, want)
	}
	if err := zero.Barrier(); !errors.Is(err, want) {
		t.Errorf("zero Barrier = %v, want %v", err, want)
	}
	if _, err := zero.Recv(nil, 0, 0); !errors.Is(err, want) {
		t.Errorf("zero Recv = %v, want %v", err, want)
	}
	if err := zero.Free(); !errors.Is(err, want) {
		t.Errorf("zero Free = %v, want %v", err, want)
	}
	if hataori.Backend() != "none" {
		borrowed := hataori.CommFromHandle(7)
		if err := borrowed.Free(); !errors.Is(err, hataori.ErrNotFreeable) {
			t.Errorf("Free of a borrowed handle = %v, want ErrNotFreeable", err)
		}
	}
	for _, l := range []hataori.ThreadLevel{-1, 4} {
		if _, err := hataori.InitThread(l); !errors.Is(err, hataori.ErrThreadLevel) {
			t.Errorf("InitThread(%d) = %v, want ErrThreadLevel", l, err)
		}
	}
	if s := hataori.ThreadSerialized.String(); s != "MPI_THREAD_SERIALIZED" {
		t.Errorf("ThreadSerialized.String() = %q", s)
	}
}

// TestCommOwnInit lets Hataori initialise and finalise MPI, and uses the
// world communicator, a duplicate and a borrowed handle.
func TestCommOwnInit(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: time.Minute})
		}
		return
	}
	// InitThread locks this goroutine to its thread: it becomes the MPI
	// main thread.
	got, err := hataori.InitThread(hataori.ThreadFunneled)
	if err != nil || got < hataori.ThreadFunneled {
		t.Fatalf("InitThread = %v, %v", got, err)
	}
	if ok, err := hataori.Initialized(); err != nil || !ok {
		t.Fatalf("Initialized = %v, %v", ok, err)
	}
	world, err := hataori.World()
	if err != nil {
		t.Fatalf("World: %v", err)
	}
	rank, err := world.Rank()
	if err != nil {
		t.Fatalf("Rank: %v", err)
	}
	size, err := world.Size()
	if err != nil {
		t.Fatalf("Size: %v", err)
	}
	borrowed := hataori.CommFromHandle(world.Handle())
	if r, err := borrowed.Rank(); err != nil || r != rank {
		t.Fatalf("borrowed Rank = %d, %v; want %d", r, err, rank)
	}
	if err := borrowed.Free(); !errors.Is(err, hataori.ErrNotFreeable) {
		t.Fatalf("Free of a borrowed handle = %v, want ErrNotFreeable", err)
	}
	if err := world.Free(); !errors.Is(err, hataori.ErrNotFreeable) {
		t.Fatalf("Free of world = %v, want ErrNotFreeable", err)
	}
	dup, err := world.Dup()
	if err != nil {
		t.Fatalf("Dup: %v", err)
	}
	if dup.Handle() == world.Handle() {
		t.Fatalf("Dup returned the world handle")
	}
	if size >= 2 && rank < 2 {
		exchange(t, dup, rank)
	}
	if err := dup.Barrier(); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
	if err := dup.Free(); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if _, err := dup.Rank(); !errors.Is(err, hataori.ErrInvalidComm) {
		t.Fatalf("Rank after Free = %v, want ErrInvalidComm", err)
	}
	if err := hataori.Finalize(); err != nil {
		t.Fatalf("Finalize: %v", err)
	}
	// Undo InitThread's lock: a thread that exits with its goroutine
	// after MPI_Finalize crashes in the MPI library (both MPIs).
	runtime.UnlockOSThread()
	if ok, err := hataori.Initialized(); err != nil || ok {
		t.Fatalf("Initialized after Finalize = %v, %v; want false", ok, err)
	}
	if _, err := hataori.World(); !errors.Is(err, hataori.ErrNotInitialized) {
		t.Fatalf("World after Finalize = %v, want ErrNotInitialized", err)
	}
}

// exchange sends a message from rank 0 to rank 1 and back on c.
func exchange(t *testing.T, c hataori.Comm, rank int) {
	t.Helper()
	buf := make([]byte, 16)
	if rank == 0 {
		if err := c.Send([]byte("hello"), 1, 3); err != nil {
			t.Fatalf("Send: %v", err)
		}
		n, err := c.Recv(buf, 1, hataori.AnyTag)
		if err != nil || string(buf[:n]) != "hello back" {
			t.Fatalf("Recv = %q, %v", buf[:n], err)
		}
		return
	}
	n, err := c.Recv(buf, hataori.AnySource, 3)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("Recv = %q, %v", buf[:n], err)
	}
	if err := c.Send([]byte("hello back"), 0, 4); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

// TestCommForeignInit checks that Hataori neither re-initialises nor
// finalises MPI that someone else initialised.
func TestCommForeignInit(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: time.Minute})
		return
	}
	rank, size := mpitest.Init(t) // MPI initialised by the harness, not by Hataori
	// MPI is up: InitThread returns the level in force and takes no lock.
	got, err := hataori.InitThread(hataori.ThreadMultiple)
	if err != nil || got < hataori.ThreadFunneled {
		t.Fatalf("InitThread on initialised MPI = %v, %v; want the level in force", got, err)
	}
	if err := hataori.Finalize(); err != nil {
		t.Fatalf("Finalize of foreign MPI = %v, want nil (no-op)", err)
	}
	if ok, err := hataori.Initialized(); err != nil || !ok {
		t.Fatalf("Initialized after Finalize of foreign MPI = %v, %v; want true", ok, err)
	}
	world, err := hataori.World()
	if err != nil {
		t.Fatalf("World: %v", err)
	}
	if r, err := world.Rank(); err != nil || r != rank {
		t.Fatalf("Rank = %d, %v; want %d", r, err, rank)
	}
	if s, err := world.Size(); err != nil || s != size {
		t.Fatalf("Size = %d, %v; want %d", s, err, size)
	}
	if err := world.Barrier(); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
}
