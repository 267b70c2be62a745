package hataori

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// stopSignals are the signals NotifyContext listens for: os.Interrupt
// (SIGINT, what Ctrl-C sends) and syscall.SIGTERM (what Open MPI's mpirun
// sends the ranks when it is interrupted).
var stopSignals = [...]os.Signal{os.Interrupt, syscall.SIGTERM}

// SignalError is the cause (context.Cause) of a context that
// [NotifyContext] cancelled because a signal arrived. It matches
// context.Canceled (errors.Is), so that a callback that returns
// context.Cause(ctx) is still seen as stopped by the call, not as failing.
type SignalError struct {
	// Signal is the signal that arrived.
	Signal os.Signal
}

// Error returns "hataori: received signal: NAME" (for example "interrupt"
// or "terminated").
func (e *SignalError) Error() string { return "hataori: received signal: " + e.Signal.String() }

// Is reports whether target is context.Canceled.
func (e *SignalError) Is(target error) bool { return target == context.Canceled }

// NotifyContext returns a copy of parent that is cancelled when the
// process receives os.Interrupt (SIGINT, what Ctrl-C sends) or
// syscall.SIGTERM, with a *[SignalError] naming the signal as its cause
// (context.Cause), or when stop is called, or when parent ends, whichever
// comes first. Pass it to [Pmap] or [PmapContext] so that Ctrl-C on the
// launcher stops a call on every rank, whichever launcher started the
// job. Call stop (defer stop()) once the work that uses ctx is done.
//
// A Ctrl-C goes to the launcher, not to the ranks (which are not in the
// terminal's foreground process group), and each launcher passes it on in
// its own way:
//
//   - Open MPI's mpirun (4.1) sends every rank SIGCONT at once, SIGTERM
//     one second later, SIGKILL one more second later, and exits with
//     status 1 (the delay is the MCA parameter odls_base_sigkill_timeout,
//     1 s by default; it spaces both steps). SIGTERM or SIGHUP to mpirun
//     do the same.
//   - MPICH's mpiexec (Hydra, 4.0) forwards SIGINT at once (and SIGTERM
//     as SIGTERM), waits for the ranks, and exits with their highest exit
//     status; a second Ctrl-C kills them.
//
// So signal.NotifyContext(ctx, os.Interrupt) alone never sees Open MPI's
// SIGTERM, which then kills the ranks silently: nothing is printed and
// nothing finished is kept. With this context, a signal to the launcher
// (or to any one rank) during a call makes Pmap return, on every rank,
// the same *[PmapError] of kind [KindCanceled] (errors.Is(err, KindCanceled)),
// typically within milliseconds of the ranks' signal; the callbacks'
// context ends with it (see PmapContext). Under the [CollectAll]
// policy the root keeps every result finished so far (PmapError.Failed
// and Failures name the others); under [FailFast] no results are returned.
// A signal before a call makes that call fail its preflight on every rank,
// also with KindCanceled. Under Open MPI the ranks have until the SIGKILL
// (1 s by default) to write out what they kept, so write it before
// calling [Finalize], which may not return while mpirun ends the job.
//
// SIGHUP is not listened for: neither launcher passes it to the
// ranks (mpirun turns it into the sequence above; Hydra dies of it and
// its proxies kill the ranks), and listening for it would undo nohup for
// a program run without a launcher (signal.Notify replaces an ignored
// disposition).
//
// Once ctx is done, for whatever reason, the signals are no longer
// diverted: a second Ctrl-C then ends a program run without a launcher at
// once, as it would without NotifyContext (launchers handle a second
// Ctrl-C themselves: Hydra kills the ranks, mpirun exits at once). Cost:
// one goroutine and one signal.Notify registration until ctx is done. It
// builds on every platform; on Windows, Go delivers SIGTERM when the
// console is closed or the user logs off.
func NotifyContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals[:]...)
	go func() {
		select {
		case s := <-ch:
			cancel(&SignalError{Signal: s})
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, func() {
		cancel(context.Canceled)
		signal.Stop(ch) // at once: a signal after stop is never swallowed
	}
}
