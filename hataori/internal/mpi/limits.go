//go:build mpirt || mpicgo

package mpi

import "fmt"

// maxCount is the largest element count an MPI int count can express.
const maxCount = 1<<31 - 1

// countErr reports a buffer whose length does not fit an MPI count.
func countErr(fn string, n int) error {
	return &Error{Func: fn, Code: CodeNotMPI, Msg: fmt.Sprintf("buffer of %d bytes exceeds the MPI count limit %d", n, maxCount)}
}

// levelErr reports a thread level outside ThreadSingle..ThreadMultiple.
func levelErr(l ThreadLevel) error {
	return &Error{Func: "MPI_Init_thread", Code: CodeNotMPI, Msg: fmt.Sprintf("thread level %d out of range 0..3", int(l))}
}
