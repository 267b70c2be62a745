//go:build unix

package hataori_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/hataori/hataori-go/hataori"
)

// A program gives Pmap (or PmapContext) the context of NotifyContext so
// that Ctrl-C on the launcher stops the call on every rank, whatever the
// launcher sends its ranks. Here the process sends itself the SIGTERM that
// Open MPI's mpirun sends every rank one second after a Ctrl-C.
func ExampleNotifyContext() {
	ctx, stop := hataori.NotifyContext(context.Background())
	defer stop()

	// out, err := hataori.PmapContext(ctx, world, d, hataori.Options{OnError: hataori.CollectAll}, items, f)
	// After the signal, err is the same *PmapError on every rank,
	// errors.Is(err, hataori.KindCanceled), and the root's out holds
	// every result finished so far (err.(*hataori.PmapError).Failed(i)
	// marks the others): save them before Finalize.
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	<-ctx.Done()

	cause := context.Cause(ctx)
	var se *hataori.SignalError
	fmt.Println(cause)
	fmt.Println(errors.As(cause, &se) && se.Signal == syscall.SIGTERM, errors.Is(cause, context.Canceled))
	// Output:
	// hataori: received signal: terminated
	// true true
}
