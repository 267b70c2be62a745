package mpitest

import (
	"io"
	"os"
	"testing"
)

// CaptureStdout runs f on the calling goroutine (so a rank's MPI calls in
// f stay on its MPI main thread) and returns what f wrote to os.Stdout. It
// is how a multi-rank test checks the output of an Example function that
// needs MPI and so cannot have an Output comment: the test runs the
// example's body on every rank and compares each rank's output. Only a
// helper goroutine that drains the pipe runs meanwhile, and it makes no MPI
// call.
func CaptureStdout(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	read := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		read <- string(b)
	}()
	defer func() { os.Stdout = saved }()
	f()
	os.Stdout = saved
	w.Close()
	out := <-read
	r.Close()
	return out
}
