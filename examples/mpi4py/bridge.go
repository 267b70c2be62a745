//go:build mpirt || mpicgo

package main

/*
#include <stdint.h>
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
)

// Return codes of the exported functions (mirrored in
// hataori/internal/interop/mpi4py/testdata/mpi4py_interop.py). Zero or a non-negative value is success.
const (
	codeOK        = 0
	codeFailed    = -1 // any other error
	codeUser      = -2 // hataori.KindUser: a callback failed on some rank
	codeNotMain   = -3 // hataori.ErrNotMainThread: called off the MPI main thread
	codeReentrant = -4 // hataori.KindReentrant
	codePreflight = -5 // hataori.KindPreflight (other than the thread check)
	codeArgument  = -6 // a bad argument from C (nil pointer, negative length)
	codeNoMPI     = -7 // hataori.ErrNoMPI or MPI not initialised
)

// lastErr is the message of the last failed call, for LastError.
var lastErr struct {
	sync.Mutex
	msg string
}

// finish records err for LastError and converts it to a code.
func finish(err error) C.int {
	lastErr.Lock()
	defer lastErr.Unlock()
	if err == nil {
		lastErr.msg = ""
		return codeOK
	}
	lastErr.msg = err.Error()
	switch {
	case errors.Is(err, hataori.ErrNotMainThread):
		return codeNotMain
	case errors.Is(err, hataori.KindReentrant):
		return codeReentrant
	case errors.Is(err, hataori.KindUser):
		return codeUser
	case errors.Is(err, hataori.KindPreflight):
		return codePreflight
	case errors.Is(err, hataori.ErrNoMPI), errors.Is(err, hataori.ErrNotInitialized):
		return codeNoMPI
	case errors.Is(err, errArgument):
		return codeArgument
	}
	return codeFailed
}

// errArgument is a bad argument passed from C.
var errArgument = errors.New("mpi4py interop: bad argument")

// copyOut writes s, NUL-terminated and truncated to fit, into the n-byte
// buffer buf and returns the length of s.
func copyOut(buf *C.char, n C.int, s string) C.int {
	if buf != nil && n > 0 {
		dst := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
		k := copy(dst[:n-1], s)
		dst[k] = 0
	}
	return C.int(len(s))
}

// LastError copies the message of the last failed call (empty after
// a success) into the n-byte buffer buf, NUL-terminated, and returns its
// full length.
//
//export LastError
func LastError(buf *C.char, n C.int) C.int {
	lastErr.Lock()
	defer lastErr.Unlock()
	return copyOut(buf, n, lastErr.msg)
}
