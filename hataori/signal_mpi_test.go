//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// Lines the ranks of TestPmapSignalStopsEveryRank print.
const (
	signalInside  = "signal test: every slot of this rank waits inside Pmap"
	signalVerdict = "signal test verdict: "
	signalKept    = "signal test: the root kept every finished result"
)

// signalKillGrace is Open MPI's odls_base_sigkill_timeout for the test, in
// seconds: after a Ctrl-C mpirun sends the ranks SIGTERM after this long
// and SIGKILL as long again after that. The default, 1 s, would make the
// verdict depend on how fast a loaded machine gets the ranks from SIGTERM
// to their verdict line; 5 s leaves them ample time, and changes only
// the spacing of mpirun's steps.
const signalKillGrace = 5

// TestPmapSignalStopsEveryRank sends SIGINT, what Ctrl-C sends, to the
// launcher (mpirun or mpiexec) while every slot of every rank is inside a
// CollectAll Pmap whose context comes from NotifyContext: every rank must
// return the same canceled error (KindCanceled, identical text and failure
// list), naming the signal its launcher passed on (Open MPI: SIGTERM,
// MPICH: SIGINT), the root must keep every finished result, and the job
// must end within 30 s of the signal.
//
// The schedule is forced: the first 3×size items return at once; the next
// ones wait for the call's context, and there are more of them than slots,
// so every slot ends up holding one (a slot asks for work as long as some
// is left). A rank prints signalInside once all its slots wait; the
// harness sends the signal once every rank printed it. By then every
// quick item is done and its result is on the root (a remote slot sends
// its RESULT before the READY that got it the waiting item), and only the
// signal can end the waits.
func TestPmapSignalStopsEveryRank(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{2, 4} {
			mpitest.Run(t, mpitest.Config{
				Ranks: n, Timeout: 120 * time.Second,
				Env:    []string{fmt.Sprintf("OMPI_MCA_odls_base_sigkill_timeout=%d", signalKillGrace)},
				Signal: &mpitest.Signal{Send: syscall.SIGINT, After: signalInside, EndWithin: 30 * time.Second},
				// mpirun exits with 1 after a Ctrl-C whatever its ranks do;
				// under MPICH every rank must pass.
				ExitCodes:   map[string]int{"openmpi": 1},
				CheckOutput: checkSignalOutput,
			})
		}
		return
	}
	e := newRankEnv(t)
	ctx, stop := NotifyContext(context.Background())
	defer stop()
	quick := 3 * e.size
	slots := e.dom.Workers()
	waiting := 2 * slots * e.size // twice as many as there are slots
	var blocked atomic.Int64
	out, err := PmapContext(ctx, e.world, e.dom, Options{Mode: Outer, OnError: CollectAll}, e.items(quick+waiting),
		func(ctx context.Context, x int) (int, error) {
			if x < quick {
				return x * x, nil
			}
			if blocked.Add(1) == int64(slots) {
				fmt.Println(signalInside)
			}
			<-ctx.Done()
			return 0, ctx.Err()
		})
	var pe *PmapError
	switch {
	case !errors.As(err, &pe):
		t.Fatalf("rank %d: Pmap = %v (%T), want a *PmapError", e.rank, err, err)
	case !errors.Is(err, KindCanceled) || pe.Kind != KindCanceled || pe.Index != -1:
		t.Errorf("rank %d: %v: kind %v, index %d; want KindCanceled, KindCanceled, index -1", e.rank, err, pe.Kind, pe.Index)
	}
	if len(pe.Failures) != waiting {
		t.Errorf("rank %d: %d items without a result, want the %d waiting ones", e.rank, len(pe.Failures), waiting)
	}
	for i, f := range pe.Failures {
		if f.Index != quick+i || f.Kind != KindCanceled {
			t.Errorf("rank %d: failure %d is %v (kind %v), want item %d, canceled", e.rank, i, f, f.Kind, quick+i)
			break
		}
	}
	if e.rank == 0 {
		if len(out) != quick+waiting {
			t.Errorf("root: %d results, want %d", len(out), quick+waiting)
		}
		for i := range min(quick, len(out)) {
			if out[i] != i*i || pe.Failed(i) {
				t.Errorf("root: result %d = %d (failed: %v), want %d kept", i, out[i], pe.Failed(i), i*i)
				break
			}
		}
		if !t.Failed() {
			fmt.Println(signalKept)
		}
	}
	if t.Failed() {
		return
	}
	h := fnv.New64a()
	fmt.Fprint(h, pe.Failures)
	// Stderr, and the launcher holds the line before the rank goes on
	// (mpirun SIGKILLs ranks that are still finalising).
	fmt.Fprintf(os.Stderr, "%sfailures %016x: %v\n", signalVerdict, h.Sum64(), err)
	WaitStderrRead(10 * time.Second)
}

// checkSignalOutput checks that every rank printed the same verdict line,
// that it names the signal the launcher passes on, that the root kept its
// results, and that no rank failed.
func checkSignalOutput(out mpitest.Output) error {
	sig := map[string]string{"openmpi": "terminated", "mpich": "interrupt"}[out.Launcher]
	var first string
	for r, lines := range out.Ranks {
		var verdicts []string
		for _, l := range lines {
			if strings.HasPrefix(l, "--- FAIL") || strings.HasPrefix(l, "panic:") {
				return fmt.Errorf("rank %d: %s", r, l)
			}
			if v, ok := strings.CutPrefix(l, signalVerdict); ok {
				verdicts = append(verdicts, v)
			}
		}
		switch {
		case !slices.Contains(lines, signalInside):
			return fmt.Errorf("rank %d never printed %q", r, signalInside)
		case len(verdicts) != 1:
			return fmt.Errorf("rank %d printed %d verdict lines, want 1 (a rank that fails its checks prints none)", r, len(verdicts))
		case r == 0:
			first = verdicts[0]
			if !strings.Contains(first, "(cause: received signal: "+sig+")") {
				return fmt.Errorf("rank 0's error %q does not name the signal %s passes on (%s)", first, out.Launcher, sig)
			}
			if !slices.Contains(lines, signalKept) {
				return fmt.Errorf("the root did not print %q", signalKept)
			}
		case verdicts[0] != first:
			return fmt.Errorf("rank %d's error differs from rank 0's:\n  %s\n  %s", r, verdicts[0], first)
		}
	}
	return nil
}

// lateSignalSurvived is what a non-root rank of TestPmapLateSignalAbsorbed
// prints once it has outlived its late signal.
const lateSignalSurvived = "late signal test: this rank outlived its late SIGINT"

// TestPmapLateSignalAbsorbed forces the schedule of a Ctrl-C whose copies
// reach the ranks at different times (Hydra's proxies signal them one by
// one): the root's callback sends the root SIGINT, which stops the call on
// every rank; only after the call has returned and its NotifyContext has
// been stopped does every other rank get its SIGINT (sent to itself here,
// as the launcher's late copy). That rank must absorb it and finalise
// normally (NotifyContext in a process that made a collective call with
// other ranks); before it did, the signal's default action ended the rank
// (status 2 under Hydra, and the others' MPI_Finalize failed with it).
func TestPmapLateSignalAbsorbed(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 60 * time.Second,
				CheckOutput: func(out mpitest.Output) error {
					for r := 1; r < len(out.Ranks); r++ {
						if !slices.Contains(out.Ranks[r], lateSignalSurvived) {
							return fmt.Errorf("rank %d did not print %q", r, lateSignalSurvived)
						}
					}
					return nil
				}})
		}
		return
	}
	e := newRankEnv(t)
	ctx, stop := NotifyContext(context.Background())
	var sent atomic.Bool
	_, err := PmapContext(ctx, e.world, nil, Options{}, e.items(4*e.size), func(ctx context.Context, x int) (int, error) {
		if e.rank == 0 && sent.CompareAndSwap(false, true) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		}
		<-ctx.Done()
		return 0, ctx.Err()
	})
	stop()
	if !errors.Is(err, KindCanceled) {
		t.Fatalf("rank %d: Pmap = %v, want KindCanceled", e.rank, err)
	}
	if e.rank == 0 {
		var se *SignalError
		if !errors.As(context.Cause(ctx), &se) {
			t.Errorf("root: cause %v, want the root's SignalError", context.Cause(ctx))
		}
		return
	}
	if context.Cause(ctx) != context.Canceled {
		t.Fatalf("rank %d: cause %v, want stop's context.Canceled (the signal must come after the call)", e.rank, context.Cause(ctx))
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
	time.Sleep(200 * time.Millisecond)
	fmt.Println(lateSignalSurvived)
}
