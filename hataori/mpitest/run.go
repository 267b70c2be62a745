package mpitest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// DefaultTimeout bounds a job whose Config.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// AnyFailure as Config.ExitCode expects the job to fail with any nonzero
// exit code.
const AnyFailure = -1

// Config describes one multi-rank job.
type Config struct {
	// Ranks is the number of processes (at least 1).
	Ranks int
	// Timeout bounds the whole job, launcher start-up included; on expiry
	// the job's process group is killed and the test fails with the
	// output so far. Zero means DefaultTimeout.
	Timeout time.Duration
	// Test is the name of the top-level test function the ranks run; it
	// is passed as -test.run=^Test$. Empty means the calling test's own
	// top-level name (the part of t.Name() before the first "/"), so a
	// test that launches itself, even from a subtest, need not spell its
	// name; set it only to launch another test function.
	Test string
	// Env is added to the ranks' environment ("KEY=value").
	Env []string
	// ExitCode is the exit code the job must end with. Zero expects
	// success, in which case every rank must report that Test passed and
	// no output line may show a failure or a panic. A nonzero value (or
	// AnyFailure) expects that failure and checks only the code and Want.
	ExitCode int
	// ExitCodes overrides ExitCode for the jobs of one launcher, by MPI
	// name ("openmpi", "mpich"), for exit statuses that differ between
	// launchers.
	ExitCodes map[string]int
	// Want lists substrings the job's combined output must contain.
	Want []string
	// EndAfter and EndWithin bound how long a job may go on after a given
	// output line: the job must end (the launcher exit) within EndWithin
	// of the arrival of the first output line containing EndAfter, and
	// that line must appear. For example, that a job ends within 10 s of
	// a rank printing that it panicked, however long start-up took. The
	// launcher forwards output with a small delay, which counts against
	// the bound. Zero EndWithin means no such bound.
	EndAfter  string
	EndWithin time.Duration
	// Mismatch starts the ranks under the OTHER MPI's launcher (the
	// Open MPI library under mpiexec.mpich and the MPICH library under
	// mpirun), to test the detection of that mistake.
	Mismatch bool
	// Signal, when not nil, is sent to the launcher during the job, once
	// every rank has printed a given line (see Signal): how a test makes
	// Ctrl-C arrive while the ranks are inside a call, by construction.
	Signal *Signal
	// CheckOutput, when not nil, is called with the job's output split by
	// rank once the job has ended (and whatever the other checks found);
	// an error it returns fails the test. It is how a test checks what
	// each rank printed, for example that every rank printed the same
	// error line.
	CheckOutput func(Output) error
}

// Signal is a signal that Run sends to the launcher of a job while it
// runs.
type Signal struct {
	// Send is the signal: syscall.SIGINT is what Ctrl-C in a terminal
	// sends, syscall.SIGTERM what kill sends. It goes to the launcher
	// process alone, not to its process group (a terminal's Ctrl-C
	// reaches the whole foreground group: both launchers, whose ranks
	// are in process groups of their own, behave the same either way).
	Send os.Signal
	// After is the line that triggers the signal: it is sent as soon as
	// every rank (0 to Config.Ranks-1, told apart by the launcher's rank
	// prefix) has printed a line containing After, and never before. A
	// test that prints it from inside a call, from callbacks that then
	// wait for the call to be stopped, makes the signal arrive during
	// the call whatever the timing. If some rank never prints it, the
	// signal is never sent and the test fails (at the latest when
	// Config.Timeout kills the job).
	After string
	// EndWithin bounds the time from sending the signal to the launcher's
	// exit (zero: Config.Timeout is the only bound).
	EndWithin time.Duration
}

// Output is the output of one job, as Config.CheckOutput receives it.
type Output struct {
	// Launcher is the MPI whose launcher ran the job: "openmpi" or
	// "mpich".
	Launcher string
	// Ranks holds, for each rank 0 to Config.Ranks-1, the lines it
	// printed (stdout and stderr, in the order they arrived) without the
	// launcher's rank prefix; a line the launcher forwarded in pieces is
	// whole again.
	Ranks [][]string
	// Other holds the lines without a rank prefix (the launcher's own
	// messages) or with a rank outside the job.
	Other []string
}

// Run runs cfg.Test as an MPI job of cfg.Ranks processes under every
// launcher/library pairing usable with this build's backend, each as a
// subtest named after the pairing and the rank count. It must be called in
// the parent process (Child() false).
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if Child() {
		t.Fatal("mpitest.Run called inside a rank: guard the parent code with if !mpitest.Child()")
	}
	cfg.Test = testOrDefault(cfg.Test, t.Name())
	if cfg.Ranks < 1 {
		t.Fatalf("mpitest.Run: invalid config %+v: need Ranks >= 1", cfg)
	}
	if sg := cfg.Signal; sg != nil && (sg.Send == nil || sg.After == "") {
		t.Fatalf("mpitest.Run: invalid Signal %+v: need Send and After", *sg)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	s, err := siteFrom(os.Environ())
	if err != nil {
		t.Fatalf("mpitest.Run: %v", err)
	}
	ps, why := pairings(cfg.Mismatch)
	if len(ps) == 0 {
		t.Skipf("skipping multi-rank test %s: %s", cfg.Test, why)
	}
	for _, p := range ps {
		t.Run(p.name(cfg.Ranks), func(t *testing.T) {
			bin, env, missing := p.prepare()
			if missing != "" {
				if required() {
					t.Fatalf("MPI is required (%s=1) but unavailable: %s", RequireEnv, missing)
				}
				t.Skipf("MPI unavailable, skipping: %s (set %s=1 to make this a failure)", missing, RequireEnv)
			}
			jc := cfg
			if code, ok := cfg.ExitCodes[p.launcher.name]; ok {
				jc.ExitCode = code
			}
			runJob(t, bin, p, s, env, jc)
		})
	}
}

// testOrDefault returns test, or when it is empty the top-level test of
// the test named name (name up to its first "/").
func testOrDefault(test, name string) string {
	if test != "" {
		return test
	}
	top, _, _ := strings.Cut(name, "/")
	return top
}

// ExpectExit runs cfg like Run but expects every job to end with exit code
// code (for example the MPI_Abort code of a deliberate failure).
func ExpectExit(t *testing.T, cfg Config, code int) {
	t.Helper()
	cfg.ExitCode = code
	Run(t, cfg)
}

// jobResult is the outcome of one job.
type jobResult struct {
	desc    string
	output  string
	code    int
	elapsed time.Duration
	// sinceMark is the time from the arrival of the first output line
	// containing Config.EndAfter to the job's end; -1 if there is none
	// (or no EndWithin).
	sinceMark time.Duration
	timedOut  bool
	err       error // the job could not be started or waited for
	// signaled reports that Config.Signal was sent, sinceSignal the time
	// from sending it to the job's end (-1 when it was not sent), and
	// signalErr why sending it failed.
	signaled    bool
	sinceSignal time.Duration
	signalErr   error
	// unmarked lists the ranks that had not printed Config.Signal.After
	// by the end of the job.
	unmarked []int
}

// runJob runs one job and checks its outcome.
func runJob(t *testing.T, bin string, p pairing, s site, env []string, cfg Config) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("cannot find the test binary: %v", err)
	}
	r := startJob(bin, p, s, env, self, cfg)
	switch {
	case r.timedOut:
		t.Fatalf("%s: killed after the %s timeout%s; output so far:\n%s", r.desc, cfg.Timeout, signalState(cfg, r), r.output)
	case r.err != nil:
		t.Fatalf("%s: %v\n%s", r.desc, r.err, r.output)
	}
	t.Logf("%s: exit code %d after %s; output:\n%s", r.desc, r.code, r.elapsed.Round(time.Millisecond), r.output)
	if cfg.CheckOutput != nil {
		if err := cfg.CheckOutput(splitOutput(r.output, cfg.Ranks, p.launcher.name)); err != nil {
			t.Errorf("%s: output check: %v (output above)", r.desc, err)
		}
	}
	if sg := cfg.Signal; sg != nil {
		switch {
		case !r.signaled:
			t.Errorf("%s: the job ended before the signal%s (output above)", r.desc, signalState(cfg, r))
			return
		case sg.EndWithin > 0 && r.sinceSignal > sg.EndWithin:
			t.Errorf("%s: the job ended %s after %v was sent to the launcher, want within %s (output above)",
				r.desc, r.sinceSignal.Round(time.Millisecond), sg.Send, sg.EndWithin)
			return
		}
		t.Logf("%s: %v sent to the launcher once every rank printed %q; the job ended %s later",
			r.desc, sg.Send, sg.After, r.sinceSignal.Round(time.Millisecond))
	}
	if cfg.EndWithin > 0 {
		switch {
		case r.sinceMark < 0:
			t.Errorf("%s: output lacks %q, from which the job must end within %s (output above)", r.desc, cfg.EndAfter, cfg.EndWithin)
			return
		case r.sinceMark > cfg.EndWithin:
			t.Errorf("%s: the job ended %s after the line with %q, want within %s (output above)",
				r.desc, r.sinceMark.Round(time.Millisecond), cfg.EndAfter, cfg.EndWithin)
			return
		}
		t.Logf("%s: ended %s after the line with %q (bound %s)", r.desc, r.sinceMark.Round(time.Millisecond), cfg.EndAfter, cfg.EndWithin)
	}
	if cfg.ExitCode != 0 && r.elapsed >= childTimeout(cfg) {
		t.Errorf("%s: the job outlived its ranks' own test timeout (%s), so it did not end by itself (output above)", r.desc, childTimeout(cfg))
		return
	}
	if problem := check(cfg, r.code, r.output); problem != "" {
		t.Errorf("%s: %s (output above)", r.desc, problem)
	}
}

// startJob runs program under the pairing's launcher, on the hosts of s
// (one host when s has none), with cfg.Timeout as a hard limit: on expiry
// the launcher and every process it started are killed (Contain), and
// whatever outlived the job is killed after it (Reap).
func startJob(bin string, p pairing, s site, env []string, program string, cfg Config) jobResult {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	if p.launcher.name == openMPI.name {
		// A session directory of the job's own: Open MPI 4's mpirun fails
		// ("orte_session_dir failed", EEXIST) when another one creates the
		// shared /tmp/ompi.HOST.UID at the same moment, as the packages'
		// tests running in parallel can. Short, for PMIx's socket paths.
		if dir, err := os.MkdirTemp("", "ompi"); err == nil {
			defer os.RemoveAll(dir)
			env = append(env[:len(env):len(env)], "OMPI_MCA_orte_tmpdir_base="+dir)
		}
	}
	cmd, out := jobCommand(ctx, bin, p, s, env, program, cfg)
	start := time.Now()
	sentAt, signalErr, runErr := runLauncher(cmd, out.watch, cfg.Signal)
	end := time.Now()
	Reap(cmd)
	r := jobResult{
		desc:      jobDesc(p, s, cfg),
		output:    out.String(),
		elapsed:   end.Sub(start),
		sinceMark: -1,
		timedOut:  ctx.Err() != nil,

		signaled:    !sentAt.IsZero(),
		sinceSignal: -1,
		signalErr:   signalErr,
	}
	if r.signaled {
		r.sinceSignal = end.Sub(sentAt)
	}
	if out.watch != nil {
		r.unmarked = out.unmarked()
	}
	if cfg.EndWithin > 0 {
		if at, ok := out.arrival(cfg.EndAfter); ok {
			r.sinceMark = end.Sub(at)
		}
	}
	if !r.timedOut {
		r.code, r.err = exitStatus(runErr)
	}
	return r
}

// jobCommand builds the launcher command of a job (see startJob), killed
// when ctx ends, and the buffer that collects its output, which watches
// for cfg.Signal's line when cfg.Signal is not nil.
func jobCommand(ctx context.Context, bin string, p pairing, s site, env []string, program string, cfg Config) (*exec.Cmd, *stampedBuffer) {
	added := append(append([]string{ChildEnv + "=1"}, env...), cfg.Env...)
	args := append(s.args(p, cfg.Ranks, added), program,
		"-test.run=^"+cfg.Test+"$", "-test.count=1", "-test.v=true",
		// The child's own timeout fires first and dumps its goroutines.
		fmt.Sprintf("-test.timeout=%s", childTimeout(cfg)))
	cmd := exec.CommandContext(ctx, bin, args...)
	Contain(cmd)
	cmd.WaitDelay = killGrace + 5*time.Second
	cmd.Env = append(os.Environ(), added...)
	out := &stampedBuffer{}
	if cfg.Signal != nil {
		out.watch = newLineWatch(cfg.Signal.After, cfg.Ranks)
	}
	cmd.Stdout = out
	cmd.Stderr = out
	return cmd, out
}

// runLauncher starts cmd and waits for it to end. When sg is not nil it
// sends sg.Send to the launcher once watch fires (watch is then the
// buffer's watch for sg.After), unless the launcher ended first: sentAt is
// when it was sent (zero when it was not), signalErr why sending failed.
// runErr is what starting or waiting for cmd returned.
func runLauncher(cmd *exec.Cmd, watch *lineWatch, sg *Signal) (sentAt time.Time, signalErr, runErr error) {
	if runErr = cmd.Start(); runErr != nil {
		return time.Time{}, nil, runErr
	}
	ended := make(chan struct{})
	signaler := make(chan struct{})
	if sg != nil {
		go func() {
			defer close(signaler)
			select {
			case <-watch.fired:
				sentAt = time.Now()
				if signalErr = cmd.Process.Signal(sg.Send); signalErr != nil {
					sentAt = time.Time{}
				}
			case <-ended:
			}
		}()
	} else {
		close(signaler)
	}
	runErr = cmd.Wait()
	close(ended)
	<-signaler
	return sentAt, signalErr, runErr
}

// jobDesc names a job in messages: launcher, test, rank count, and the
// hosts when the job spans several.
func jobDesc(p pairing, s site, cfg Config) string {
	if s.multiHost() && p.launcher.name == p.lib.name {
		return fmt.Sprintf("%s %s (%d ranks on hosts %s)", p.launcher.bin, cfg.Test, cfg.Ranks, s.hostList())
	}
	return fmt.Sprintf("%s %s (%d ranks)", p.launcher.bin, cfg.Test, cfg.Ranks)
}

// exitStatus splits the error of a launcher that ran (and was not killed
// on timeout) into its exit code, or err when it has none (the launcher
// could not be started or waited for).
func exitStatus(runErr error) (code int, err error) {
	if runErr == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(runErr, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, runErr
}

// signalState says, for a job with Config.Signal, whether the signal was
// sent, and if not which ranks had not printed its line; "" otherwise.
func signalState(cfg Config, r jobResult) string {
	switch sg := cfg.Signal; {
	case sg == nil:
		return ""
	case r.signaled:
		return fmt.Sprintf(" (%v was sent to the launcher %s before the end)", sg.Send, r.sinceSignal.Round(time.Millisecond))
	case r.signalErr != nil:
		return fmt.Sprintf(" (sending %v to the launcher failed: %v)", sg.Send, r.signalErr)
	default:
		return fmt.Sprintf(" (%v was never sent: ranks %v never printed %q)", sg.Send, r.unmarked, sg.After)
	}
}

// childTimeout is the -test.timeout of the ranks of a job: shorter than
// the job's timeout, so that a hung rank dumps its goroutines before it is
// killed.
func childTimeout(cfg Config) time.Duration { return cfg.Timeout * 9 / 10 }

// check returns what is wrong with a job's outcome, or "".
func check(cfg Config, code int, output string) string {
	for _, w := range cfg.Want {
		if !strings.Contains(output, w) {
			return fmt.Sprintf("output lacks %q", w)
		}
	}
	// A rank's own -test.timeout fires shortly before Config.Timeout and
	// makes the job fail, but a job that had to be ended that way did not
	// end by itself: that is never the failure a test expects.
	if cfg.ExitCode != 0 {
		for _, line := range strings.Split(output, "\n") {
			if strings.HasPrefix(stripRankPrefix(line), "panic: test timed out after") {
				return "a rank's own test timeout ended the job (it did not end by itself): " + strings.TrimSpace(line)
			}
		}
	}
	switch {
	case cfg.ExitCode == AnyFailure:
		if code == 0 {
			return "exit code 0, want a failure"
		}
		return ""
	case cfg.ExitCode != 0:
		if code != cfg.ExitCode {
			return fmt.Sprintf("exit code %d, want %d", code, cfg.ExitCode)
		}
		return ""
	}
	if code != 0 {
		return fmt.Sprintf("exit code %d", code)
	}
	passed := 0
	for _, line := range strings.Split(output, "\n") {
		body := stripRankPrefix(line)
		switch {
		case strings.HasPrefix(body, "--- FAIL"), body == "FAIL", strings.HasPrefix(body, "FAIL\t"):
			return "a rank failed: " + strings.TrimSpace(line)
		case strings.HasPrefix(body, "panic:"):
			return "a rank panicked: " + strings.TrimSpace(line)
		case strings.Contains(body, "no tests to run"):
			return fmt.Sprintf("no test matched -test.run=^%s$", cfg.Test)
		case strings.HasPrefix(body, "--- PASS: "+cfg.Test+" "):
			passed++
		}
	}
	if passed != cfg.Ranks {
		return fmt.Sprintf("%d of %d ranks reported --- PASS: %s", passed, cfg.Ranks, cfg.Test)
	}
	return ""
}
