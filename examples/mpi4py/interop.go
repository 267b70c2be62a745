//go:build mpirt || mpicgo

package main

// The exports below are not part of the primes recipe: they are the hooks
// of Hataori's mpi4py acceptance test (hataori/internal/interop/mpi4py),
// which builds this library and drives them from
// testdata/mpi4py_interop.py there: handles, InitThread and Finalize
// under mpi4py's MPI, a borrowed communicator's Free, Pmap with and
// without a domain, Gather and Broadcast. Their return codes are the
// code* constants (bridge.go).

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
)

// HataoriBackend copies the name of the compiled-in MPI backend ("mpirt"
// or "mpicgo") into buf like LastError.
//
//export HataoriBackend
func HataoriBackend(buf *C.char, n C.int) C.int {
	return copyOut(buf, n, hataori.Backend())
}

// HataoriInitialized returns 1 when Hataori sees MPI initialised and not
// finalised, 0 when not, or a negative code.
//
//export HataoriInitialized
func HataoriInitialized() C.int {
	ok, err := hataori.Initialized()
	if err != nil {
		return finish(err)
	}
	finish(nil)
	if ok {
		return 1
	}
	return 0
}

// HataoriInitThread calls hataori.InitThread(required): with MPI already
// initialised by mpi4py it must not initialise it again and returns the
// level in force (0..3) or a negative code.
//
//export HataoriInitThread
func HataoriInitThread(required C.int) C.int {
	got, err := hataori.InitThread(hataori.ThreadLevel(required))
	if err != nil {
		return finish(err)
	}
	finish(nil)
	return C.int(got)
}

// HataoriFinalize calls hataori.Finalize, which must leave MPI alone since
// Hataori did not initialise it.
//
//export HataoriFinalize
func HataoriFinalize() C.int { return finish(hataori.Finalize()) }

// HataoriWorldHandle returns the handle of hataori.World(), which equals
// mpi4py's handle of MPI.COMM_WORLD when both share one MPI, or 0 on error.
//
//export HataoriWorldHandle
func HataoriWorldHandle() C.uintptr_t {
	w, err := hataori.World()
	finish(err)
	if err != nil {
		return 0
	}
	return C.uintptr_t(w.Handle())
}

// HataoriRankSize stores the calling process's rank in, and the size of,
// the borrowed communicator comm.
//
//export HataoriRankSize
func HataoriRankSize(comm C.uintptr_t, rank, size *C.int) C.int {
	if rank == nil || size == nil {
		return finish(fmt.Errorf("%w: nil rank or size pointer", errArgument))
	}
	c := hataori.CommFromHandle(uintptr(comm))
	r, err := c.Rank()
	if err != nil {
		return finish(err)
	}
	s, err := c.Size()
	if err != nil {
		return finish(err)
	}
	*rank, *size = C.int(r), C.int(s)
	return finish(nil)
}

// HataoriFreeBorrowed asks Hataori to free the borrowed communicator comm.
// It must refuse (hataori.ErrNotFreeable): the function returns 0 when it
// refused and codeFailed, with a message, when it did anything else.
//
//export HataoriFreeBorrowed
func HataoriFreeBorrowed(comm C.uintptr_t) C.int {
	c := hataori.CommFromHandle(uintptr(comm))
	err := c.Free()
	if errors.Is(err, hataori.ErrNotFreeable) {
		return finish(nil)
	}
	if err == nil {
		err = errors.New("hataori freed a communicator it did not create")
	}
	return finish(fmt.Errorf("hataori.Comm.Free of a borrowed communicator: want ErrNotFreeable, got %w", err))
}

// square is one Pmap result: the square of an item and the rank that
// computed it.
type square struct {
	Value int64
	Rank  int
}

// HataoriSquares runs hataori.Pmap over the items 0..n-1 of rank 0 on the
// borrowed communicator comm (collective: every rank of comm calls it;
// only rank 0's n counts). The callback squares its item. With domain != 0
// the callbacks run on a local domain (mode Outer, batches of 2), else on
// the calling thread (MPI-only, Sequential). With failAt >= 0 every item
// >= failAt fails, so every rank must return codeUser with the same
// message naming item failAt. On rank 0, values[i] and ranks[i] (n entries
// each) receive item i's square and the rank that computed it.
//
//export HataoriSquares
func HataoriSquares(comm C.uintptr_t, n, domain, failAt C.int, values *C.longlong, ranks *C.int) C.int {
	c := hataori.CommFromHandle(uintptr(comm))
	me, err := c.Rank()
	if err != nil {
		return finish(err)
	}
	// Bad arguments on rank 0 still take part in the collective call (with
	// no items), so that no other rank waits, and are reported afterwards.
	var badArgs error
	items := hataori.None[[]int64]()
	if me == 0 {
		var in []int64
		if n < 0 || (n > 0 && (values == nil || ranks == nil)) {
			badArgs = fmt.Errorf("%w: n = %d, values %p, ranks %p", errArgument, int(n), values, ranks)
		} else {
			in = make([]int64, int(n))
		}
		for i := range in {
			in[i] = int64(i)
		}
		items = hataori.Some(in)
	}
	f := func(x int64) (square, error) {
		if failAt >= 0 && x >= int64(failAt) {
			return square{}, fmt.Errorf("square: refusing item %d", x)
		}
		return square{Value: x * x, Rank: me}, nil
	}
	opts := hataori.Options{Root: 0, BatchSize: 1, Mode: hataori.Sequential}
	var d *hataori.Domain
	if domain != 0 {
		d, err = hataori.NewLocalDomain()
		if err != nil {
			return finish(err)
		}
		defer d.Close()
		opts.Mode, opts.BatchSize = hataori.Outer, 2
	}
	out, err := hataori.Pmap(context.Background(), c, d, opts, items, f)
	if err != nil {
		return finish(err)
	}
	if badArgs != nil {
		return finish(badArgs)
	}
	if me == 0 {
		if len(out) != int(n) {
			return finish(fmt.Errorf("hataori.Pmap returned %d results for %d items", len(out), int(n)))
		}
		vs := unsafe.Slice((*int64)(unsafe.Pointer(values)), len(out))
		rs := unsafe.Slice((*C.int)(unsafe.Pointer(ranks)), len(out))
		for i, r := range out {
			vs[i], rs[i] = r.Value, C.int(r.Rank)
		}
	}
	return finish(nil)
}

// HataoriGather runs hataori.Gather of every rank's value to root on comm.
// On root, out (capacity n) receives the gathered values in rank order; n
// must be at least the size of comm. It makes no MPI call before Gather's
// own entry checks, so a call off the MPI main thread fails on each rank
// alone with codeNotMain.
//
//export HataoriGather
func HataoriGather(comm C.uintptr_t, root C.int, value C.longlong, out *C.longlong, n C.int) C.int {
	c := hataori.CommFromHandle(uintptr(comm))
	got, err := hataori.Gather(context.Background(), c, int(root), int64(value))
	if err != nil {
		return finish(err)
	}
	if got != nil { // the root
		if out == nil || int(n) < len(got) {
			return finish(fmt.Errorf("%w: out holds %d values, gathered %d", errArgument, int(n), len(got)))
		}
		copy(unsafe.Slice((*int64)(unsafe.Pointer(out)), len(got)), got)
	}
	return finish(nil)
}

// HataoriBroadcast runs hataori.Broadcast of root's value on comm and
// stores the value received in *out on every rank (a nil out is reported
// after the collective call, so that no other rank waits).
//
//export HataoriBroadcast
func HataoriBroadcast(comm C.uintptr_t, root C.int, value C.longlong, out *C.longlong) C.int {
	c := hataori.CommFromHandle(uintptr(comm))
	me, err := c.Rank()
	if err != nil {
		return finish(err)
	}
	v := hataori.None[int64]()
	if me == int(root) {
		v = hataori.Some(int64(value))
	}
	got, err := hataori.Broadcast(context.Background(), c, int(root), v)
	if err != nil {
		return finish(err)
	}
	if out == nil {
		return finish(fmt.Errorf("%w: nil out pointer", errArgument))
	}
	*out = C.longlong(got)
	return finish(nil)
}
