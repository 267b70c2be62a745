//go:build mpirt || mpicgo

package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestCommErrorsMPI: with MPI initialised by Hataori, an MPI error on
// World or on a Dup (a send to rank = size, a receive of 16 bytes into 8)
// comes back as an *MPIError carrying MPI's own message on the rank that
// made the call, and the job goes on: the communicators and the collective
// calls keep working. InitThread and Dup make the private duplicates.
func TestCommErrorsMPI(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: time.Minute})
		}
		return
	}
	// InitThread locks this goroutine to its thread: it becomes the MPI
	// main thread.
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		t.Fatalf("InitThread: %v", err)
	}
	defer func() {
		if err := hataori.Finalize(); err != nil {
			t.Errorf("Finalize: %v", err)
		}
		// Undo InitThread's lock: a thread that exits with its goroutine
		// after MPI_Finalize crashes in the MPI library (both MPIs).
		runtime.UnlockOSThread()
	}()
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	rank, err := world.Rank()
	if err != nil {
		t.Fatal(err)
	}
	size, err := world.Size()
	if err != nil {
		t.Fatal(err)
	}
	// InitThread made World's private duplicate, Dup its own (checked
	// under hataoridebug).
	if s, dbg := coll.DebugOpens(); dbg && (s.Kept != 1 || s.Dups != 1) {
		t.Errorf("after InitThread: %+v, want World's duplicate made and kept", s)
	}
	dup, err := world.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if s, dbg := coll.DebugOpens(); dbg && (s.Kept != 2 || s.Dups != 2) {
		t.Errorf("after Dup: %+v, want its duplicate made and kept too", s)
	}
	for _, c := range []struct {
		name string
		comm hataori.Comm
	}{{"World", world}, {"Dup", dup}} {
		err := c.comm.Send([]byte("x"), size, 5)
		isMPIError(t, fmt.Sprintf("%s: Send to rank %d of %d", c.name, size, size), err, "MPI_Send")
		if p := rank ^ 1; p < size {
			if rank < p {
				if err := c.comm.Send(make([]byte, 16), p, 6); err != nil {
					t.Fatalf("%s: Send of 16 bytes: %v", c.name, err)
				}
			} else {
				n, err := c.comm.Recv(make([]byte, 8), p, 6)
				isMPIError(t, fmt.Sprintf("%s: Recv of 16 bytes into 8 (got n=%d)", c.name, n), err, "MPI_Recv")
			}
		}
		// The communicator still works.
		if err := c.comm.Barrier(); err != nil {
			t.Fatalf("%s: Barrier after the errors: %v", c.name, err)
		}
		if size >= 2 && rank < 2 {
			exchange(t, c.comm, rank)
		}
	}
	// So do the collective calls, on both.
	for _, c := range []hataori.Comm{world, dup} {
		all, err := hataori.Gather(context.Background(), c, 0, int64(rank))
		if err != nil || (rank == 0 && len(all) != size) {
			t.Fatalf("Gather after the errors = %v, %v", all, err)
		}
	}
	if err := dup.Free(); err != nil {
		t.Fatal(err)
	}
}

// isMPIError checks that err is an *MPIError of fn with MPI's message.
func isMPIError(t *testing.T, label string, err error, fn string) {
	t.Helper()
	var me *hataori.MPIError
	switch {
	case !errors.As(err, &me):
		t.Errorf("%s = %v (%T), want an *hataori.MPIError", label, err, err)
	case me.Func != fn || me.Code == 0 || me.Code == -1 || me.Message == "":
		t.Errorf("%s = %+v, want %s with an MPI error code and MPI's message", label, me, fn)
	case !errors.Is(err, hataori.ErrMPI):
		t.Errorf("%s: errors.Is(%v, ErrMPI) is false", label, err)
	default:
		t.Logf("%s: %v", label, err)
	}
}

// borrowedMarker is printed by TestCommBorrowedHandlerMPI just before the
// erroneous call on the borrowed handle.
const borrowedMarker = "about to send to an invalid rank on the borrowed handle"

// TestCommBorrowedHandlerMPI: Hataori never changes the error handler of
// a communicator it does not own. A handle from CommFromHandle (a
// duplicate made outside Hataori, with MPI's default handler
// MPI_ERRORS_ARE_FATAL) still aborts the job on an MPI error, even after
// Hataori's collective calls used it, while a Dup of it returns errors.
func TestCommBorrowedHandlerMPI(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: time.Minute,
			ExitCode: mpitest.AnyFailure, Want: []string{borrowedMarker, "nvalid rank"}})
		return
	}
	_, size := mpitest.Init(t)
	h, err := mpi.Dup(mpi.World()) // a communicator of some other library
	if err != nil {
		t.Fatal(err)
	}
	borrowed := hataori.CommFromHandle(uintptr(h))
	if _, err := hataori.Broadcast(context.Background(), borrowed, 0, someOnRank0(borrowed, 7)); err != nil {
		t.Fatal(err)
	}
	own, err := borrowed.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Send([]byte("x"), size, 1); !errors.Is(err, hataori.ErrMPI) {
		t.Fatalf("Send to an invalid rank on a Dup of the borrowed handle = %v, want an *MPIError", err)
	}
	fmt.Fprintln(os.Stderr, borrowedMarker)
	// MPICH's launcher may drop a line the aborting rank wrote just before
	// the abort (seen here under load): abort only once the launcher has
	// read it (bounded: a line still lost fails the job's Want check).
	hataori.WaitStderrRead(10 * time.Second)
	err = borrowed.Send([]byte("x"), size, 1)
	// Not reached when the handler is still MPI_ERRORS_ARE_FATAL. (The
	// error's text is left out: the job's output must hold "invalid rank"
	// only from MPI's own abort message.)
	t.Fatalf("Send to an invalid rank on the borrowed handle returned (error: %v) instead of aborting", err != nil)
}

// someOnRank0 is Some(v) on rank 0 of c and None elsewhere.
func someOnRank0[T any](c hataori.Comm, v T) hataori.Maybe[T] {
	if r, _ := c.Rank(); r == 0 {
		return hataori.Some(v)
	}
	return hataori.None[T]()
}

// TestCommFreedCopyMPI: Free releases a communicator from Dup for every
// copy of it, not only the one it was called on. Each copy (a plain copy,
// one held in a struct, the freed value itself) then reports
// ErrInvalidComm from its methods, a second Free included, and Broadcast
// and Pmap on it return a local preflight error (Rank -1) wrapping
// ErrInvalidComm on every rank without calling MPI with the freed handle:
// a later collective call on World still matches on every rank.
func TestCommFreedCopyMPI(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: time.Minute})
		}
		return
	}
	rank, size := mpitest.Init(t)
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	dup, err := world.Dup()
	if err != nil {
		t.Fatal(err)
	}
	cp := dup
	held := struct{ c hataori.Comm }{dup}
	if cp.Handle() == 0 || cp.Handle() != dup.Handle() {
		t.Fatalf("copy Handle = %#x, Dup Handle = %#x", cp.Handle(), dup.Handle())
	}
	if r, err := cp.Rank(); err != nil || r != rank {
		t.Fatalf("copy Rank before Free = %d, %v; want %d", r, err, rank)
	}
	if err := dup.Free(); err != nil {
		t.Fatalf("Free: %v", err)
	}
	ctx := context.Background()
	items := hataori.None[[]int]()
	if rank == 0 {
		items = hataori.Some([]int{1, 2, 3})
	}
	ran := 0
	for _, c := range []struct {
		name string
		comm hataori.Comm
	}{{"copy", cp}, {"copy in a struct", held.c}, {"freed Comm", dup}} {
		if h := c.comm.Handle(); h != 0 {
			t.Errorf("rank %d: %s: Handle after Free = %#x, want 0", rank, c.name, h)
		}
		if _, err := c.comm.Rank(); !errors.Is(err, hataori.ErrInvalidComm) {
			t.Fatalf("rank %d: %s: Rank after Free = %v, want ErrInvalidComm", rank, c.name, err)
		}
		if _, err := c.comm.Size(); !errors.Is(err, hataori.ErrInvalidComm) {
			t.Fatalf("rank %d: %s: Size after Free = %v, want ErrInvalidComm", rank, c.name, err)
		}
		if _, err := c.comm.Dup(); !errors.Is(err, hataori.ErrInvalidComm) {
			t.Fatalf("rank %d: %s: Dup after Free = %v, want ErrInvalidComm", rank, c.name, err)
		}
		if err := c.comm.Free(); !errors.Is(err, hataori.ErrInvalidComm) {
			t.Fatalf("rank %d: %s: second Free = %v, want ErrInvalidComm", rank, c.name, err)
		}
		value := hataori.None[int]()
		if rank == 0 {
			value = hataori.Some(7)
		}
		_, err := hataori.Broadcast(ctx, c.comm, 0, value)
		var ce *hataori.CollectiveError
		if !errors.As(err, &ce) || ce.Rank != -1 || ce.Kind != hataori.KindPreflight || !errors.Is(err, hataori.ErrInvalidComm) {
			t.Fatalf("rank %d: %s: Broadcast after Free = %v, want a local preflight error wrapping ErrInvalidComm", rank, c.name, err)
		}
		_, err = hataori.Pmap(ctx, c.comm, nil, hataori.Options{}, items, func(x int) (int, error) {
			ran++
			return x, nil
		})
		var pe *hataori.PmapError
		if !errors.As(err, &pe) || pe.Rank != -1 || pe.Kind != hataori.KindPreflight || !errors.Is(err, hataori.ErrInvalidComm) {
			t.Fatalf("rank %d: %s: Pmap after Free = %v, want a local preflight error wrapping ErrInvalidComm", rank, c.name, err)
		}
	}
	if ran != 0 {
		t.Errorf("rank %d: %d callbacks ran on a freed communicator", rank, ran)
	}
	// No rank entered a collective call on the freed handle: the next one
	// on World matches on every rank.
	all, err := hataori.Gather(ctx, world, 0, int64(rank))
	if err != nil || (rank == 0 && len(all) != size) {
		t.Fatalf("rank %d: Gather on World after the refused calls = %v, %v", rank, all, err)
	}
}
