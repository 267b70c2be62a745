package mpiabi_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

const threadExitChildEnv = "HATAORI_TEST_THREAD_EXIT_CHILD"

// TestLockedThreadExitAfterCall checks that a thread which made MPI calls
// can end: a goroutine that returns while locked to its thread (a pinned
// domain worker does) makes the runtime destroy that thread, and the thread
// returns through the frames the runtime started it with. A foreign call
// that writes above its own stack frame (purego before v0.11 stored its
// argument pointer there) corrupts that return and kills the process with
// SIGSEGV and no Go traceback. The exits run in a child process so that
// such a crash fails this test with its signal instead of ending the test
// binary.
func TestLockedThreadExitAfterCall(t *testing.T) {
	if os.Getenv(threadExitChildEnv) == "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestLockedThreadExitAfterCall$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), threadExitChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v (a thread that ended after a call crashed the process)\n%s", err, out)
		}
		return
	}
	l := openFake(t)
	for i := range 64 {
		done := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			_, err := l.Initialized()
			done <- err
		}()
		if err := <-done; err != nil {
			t.Fatalf("exit %d: Initialized: %v", i, err)
		}
		time.Sleep(2 * time.Millisecond) // let the thread end before the next
	}
}
