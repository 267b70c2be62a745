package hataori

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
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
// Once ctx is done, the signals are no longer diverted: after the first
// signal, a second Ctrl-C ends a program run without a launcher at once,
// as it would without NotifyContext (launchers handle a second Ctrl-C
// themselves: Hydra kills the ranks, mpirun exits at once); after stop
// or the parent's end, the first signal already has its default effect.
// One exception, in a process that has made a collective call with other
// ranks: when ctx ended without a signal, the first signal that arrives
// within 3 seconds (lateSignalGrace) is still absorbed. A launcher passes one
// Ctrl-C to every rank, not at the same instant (Hydra's proxies signal
// the ranks one by one), so a rank whose call another rank's signal has
// already stopped may get its own copy after stop, while it writes out
// or finalises; it would die of it, and MPI_Finalize on the other ranks
// would fail with it. Cost: one goroutine and one signal.Notify
// registration until ctx is done (until 3 s after it, in such a
// process). It builds on every platform; on Windows, Go delivers
// SIGTERM when the console is closed or the user logs off.
func NotifyContext(parent context.Context) (ctx context.Context, stop context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals[:]...)
	go func() {
		select {
		case s := <-ch:
			cancel(&SignalError{Signal: s})
		case <-ctx.Done():
			if sharedJob.Load() {
				absorbLate(ch)
			}
		}
		signal.Stop(ch)
	}()
	return ctx, func() {
		cancel(context.Canceled)
		if !sharedJob.Load() {
			signal.Stop(ch) // at once: a signal after stop is never swallowed
		}
	}
}

// lateSignalGrace is how long after its context ended without a signal
// NotifyContext still absorbs one signal, in a process that has made a
// collective call with other ranks (see NotifyContext). Under load,
// Hydra's copy of a Ctrl-C reached a rank after another rank's signal had
// stopped the call everywhere and the rank had printed its outcome (in 12
// of 461 runs of a 4-rank job, three other such jobs beside it).
const lateSignalGrace = 3 * time.Second

// absorbLate waits for one signal on ch, at most lateSignalGrace.
func absorbLate(ch <-chan os.Signal) {
	t := time.NewTimer(lateSignalGrace)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// sharedJob records that this process has made a collective call on a
// communicator of more than one rank (openCollective): a launcher then
// passes each Ctrl-C to it too.
var sharedJob atomic.Bool
