//go:build mpirt || mpicgo

package main

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

// done records err for LastError like finish, but with the callback's own
// message (identical on every rank) for a callback failure, and returns 0
// for success, -1 for an error.
func done(err error) C.int {
	if finish(err) == codeOK {
		return 0
	}
	var pe *hataori.PmapError
	if errors.As(err, &pe) && pe.Kind == hataori.KindUser {
		lastErr.Lock()
		lastErr.msg = pe.Message
		lastErr.Unlock()
	}
	return codeFailed
}

// PrimesBelow counts the primes below each of the root's limits with
// hataori.Pmap over the communicator whose mpi4py handle is comm. It is
// collective: every rank of comm calls it, from the thread that initialised
// MPI. On rank 0, limits and counts hold n values each, and counts[i]
// receives the number of primes below limits[i]; the other ranks pass
// NULL, NULL, 0. It returns 0, or -1 on every rank with the same error for
// LastError (a negative limit, say).
//
//export PrimesBelow
func PrimesBelow(comm C.uintptr_t, limits *C.longlong, counts *C.longlong, n C.int) C.int {
	// A Go function called from C runs on the calling thread, locked to it
	// for the call: Hataori's MPI calls come from Python's thread.
	if ok, err := hataori.Initialized(); err != nil {
		return done(err) // under mpirt: MPI_RT_LIB unset or not an MPIABI library
	} else if !ok {
		return done(errors.New("PrimesBelow: MPI is not initialised: import mpi4py.MPI first"))
	}
	c := hataori.CommFromHandle(uintptr(comm)) // borrowed: Hataori never frees it
	rank, err := c.Rank()
	if err != nil {
		return done(err)
	}
	// Bad arguments on the root still take part in the collective call
	// (with no items), so that no other rank waits, and fail afterwards.
	var bad error
	items := hataori.None[[]int64]()
	if rank == 0 {
		var in []int64
		if n < 0 || (n > 0 && (limits == nil || counts == nil)) {
			bad = fmt.Errorf("PrimesBelow: bad arguments on the root: n = %d, limits %p, counts %p", int(n), limits, counts)
		} else if n > 0 {
			in = append(in, unsafe.Slice((*int64)(unsafe.Pointer(limits)), int(n))...)
		}
		items = hataori.Some(in)
	}

	// The level in force (InitThread does not initialise MPI again). A
	// domain needs MPI_THREAD_FUNNELED; below it, Pmap runs MPI-only.
	level, err := hataori.InitThread(hataori.ThreadFunneled)
	if err != nil {
		return done(err)
	}
	var d *hataori.Domain
	opts := hataori.Options{Root: 0, BatchSize: 1, Mode: hataori.Sequential}
	if level >= hataori.ThreadFunneled {
		if d, err = hataori.NewLocalDomain(); err != nil {
			return done(err)
		}
		defer d.Close()
		opts.Mode = hataori.Outer
	}
	out, err := hataori.Pmap(context.Background(), c, d, opts, items, primesBelow)
	if err != nil {
		return done(err)
	}
	if bad != nil {
		return done(bad)
	}
	if rank == 0 && len(out) > 0 {
		copy(unsafe.Slice((*int64)(unsafe.Pointer(counts)), len(out)), out)
	}
	return done(nil)
}

// primesBelow counts the primes p < limit with a sieve of Eratosthenes.
func primesBelow(limit int64) (int64, error) {
	if limit < 0 {
		return 0, fmt.Errorf("primes below %d: the limit must not be negative", limit)
	}
	composite := make([]bool, limit)
	var count int64
	for p := int64(2); p < limit; p++ {
		if composite[p] {
			continue
		}
		count++
		for q := p * p; q < limit; q += p {
			composite[q] = true
		}
	}
	return count, nil
}
