//go:build unix

package hataori_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// waitDone waits for ctx to end, failing the test after a generous bound
// (the signal is already sent: only a broken relay makes it wait).
func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the context did not end within 10 s of the signal")
	}
}

// TestNotifyContextSignals sends this process SIGINT and then SIGTERM:
// each cancels a fresh context with a *SignalError naming it, which
// matches context.Canceled.
func TestNotifyContextSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		ctx, stop := hataori.NotifyContext(context.Background())
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		waitDone(t, ctx)
		cause := context.Cause(ctx)
		var se *hataori.SignalError
		if !errors.As(cause, &se) || se.Signal != sig {
			t.Errorf("%v: cause %v (%T), want a *SignalError naming the signal", sig, cause, cause)
		}
		if want := "hataori: received signal: " + sig.String(); cause == nil || cause.Error() != want {
			t.Errorf("%v: cause text %q, want %q", sig, cause, want)
		}
		if !errors.Is(cause, context.Canceled) || !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("%v: cause %v and ctx.Err %v must match context.Canceled", sig, cause, ctx.Err())
		}
		stop()
	}
}

// TestNotifyContextStopAndParent: stop and the parent's end cancel the
// context without a SignalError.
func TestNotifyContextStopAndParent(t *testing.T) {
	ctx, stop := hataori.NotifyContext(context.Background())
	if ctx.Err() != nil {
		t.Fatalf("fresh context already done: %v", ctx.Err())
	}
	stop()
	if !errors.Is(ctx.Err(), context.Canceled) || context.Cause(ctx) != context.Canceled {
		t.Errorf("after stop: Err %v, Cause %v; want context.Canceled for both", ctx.Err(), context.Cause(ctx))
	}
	stop() // a second stop is harmless

	parentCause := errors.New("parent gave up")
	parent, cancel := context.WithCancelCause(context.Background())
	ctx, stop = hataori.NotifyContext(parent)
	defer stop()
	cancel(parentCause)
	waitDone(t, ctx)
	if context.Cause(ctx) != parentCause {
		t.Errorf("after the parent ended: Cause %v, want the parent's", context.Cause(ctx))
	}
}

// signalChildEnv makes the test binary run one scenario of
// TestNotifyContextSignalsRestored and exit.
const signalChildEnv = "HATAORI_TEST_SIGNAL_CHILD"

// TestNotifyContextSignalsRestored checks, in a child process each, that
// the signals have their default effect again (they end the process) after
// the first signal cancelled the context, and at once after stop.
func TestNotifyContextSignalsRestored(t *testing.T) {
	if mode := os.Getenv(signalChildEnv); mode != "" {
		signalChild(mode)
		return
	}
	for _, mode := range []string{"second-signal", "after-stop"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestNotifyContextSignalsRestored$", "-test.count=1")
		cmd.Env = append(os.Environ(), signalChildEnv+"="+mode)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Errorf("%s: child ended with %v, want death by SIGINT; output:\n%s", mode, err, out)
			continue
		}
		ws, ok := ee.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Errorf("%s: child ended with %v, want death by SIGINT; output:\n%s", mode, err, out)
		}
	}
}

// signalChild runs one scenario in the child and exits 0 only if SIGINT
// failed to kill it (the parent then reports the failure).
func signalChild(mode string) {
	ctx, stop := hataori.NotifyContext(context.Background())
	switch mode {
	case "second-signal":
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		<-ctx.Done()
		// The relay goroutine stops diverting SIGINT right after it
		// cancelled ctx: send until the default action ends the process.
		for range 500 {
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
			time.Sleep(10 * time.Millisecond)
		}
	case "after-stop":
		stop()
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(5 * time.Second)
	}
	os.Stdout.WriteString("still alive: SIGINT is still diverted\n")
	os.Exit(0)
}
