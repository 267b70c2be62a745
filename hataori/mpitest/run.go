package mpitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
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
	// is passed as -test.run=^Test$.
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
	if cfg.Ranks < 1 || cfg.Test == "" {
		t.Fatalf("mpitest.Run: invalid config %+v: need Ranks >= 1 and Test", cfg)
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
		t.Fatalf("%s: killed after the %s timeout; output so far:\n%s", r.desc, cfg.Timeout, r.output)
	case r.err != nil:
		t.Fatalf("%s: %v\n%s", r.desc, r.err, r.output)
	}
	t.Logf("%s: exit code %d after %s; output:\n%s", r.desc, r.code, r.elapsed.Round(time.Millisecond), r.output)
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
	added := append(append([]string{ChildEnv + "=1"}, env...), cfg.Env...)
	args := append(s.args(p, cfg.Ranks, added), program,
		"-test.run=^"+cfg.Test+"$", "-test.count=1", "-test.v=true",
		// The child's own timeout fires first and dumps its goroutines.
		fmt.Sprintf("-test.timeout=%s", childTimeout(cfg)))
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	Contain(cmd)
	cmd.WaitDelay = killGrace + 5*time.Second
	cmd.Env = append(os.Environ(), added...)
	out := &stampedBuffer{}
	cmd.Stdout = out
	cmd.Stderr = out
	start := time.Now()
	runErr := cmd.Run()
	end := time.Now()
	Reap(cmd)
	desc := fmt.Sprintf("%s %s (%d ranks)", p.launcher.bin, cfg.Test, cfg.Ranks)
	if s.multiHost() && p.launcher.name == p.lib.name {
		desc = fmt.Sprintf("%s %s (%d ranks on hosts %s)", p.launcher.bin, cfg.Test, cfg.Ranks, s.hostList())
	}
	r := jobResult{
		desc:      desc,
		output:    out.String(),
		elapsed:   end.Sub(start),
		sinceMark: -1,
		timedOut:  ctx.Err() != nil,
	}
	if cfg.EndWithin > 0 {
		if at, ok := out.arrival(cfg.EndAfter); ok {
			r.sinceMark = end.Sub(at)
		}
	}
	if runErr != nil && !r.timedOut {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			r.code = ee.ExitCode()
		} else {
			r.err = runErr
		}
	}
	return r
}

// stampedBuffer collects a job's output and when each piece arrived.
type stampedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ends  []int       // offset just past each write
	times []time.Time // arrival of each write
}

func (b *stampedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	b.ends = append(b.ends, b.buf.Len())
	b.times = append(b.times, time.Now())
	return n, err
}

func (b *stampedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// arrival returns when the first line containing s had arrived whole (up
// to its newline, or to the end of the output).
func (b *stampedBuffer) arrival(s string) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	data := b.buf.Bytes()
	i := bytes.Index(data, []byte(s))
	if s == "" || i < 0 {
		return time.Time{}, false
	}
	lineEnd := len(data)
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		lineEnd = i + j + 1
	}
	for k, e := range b.ends {
		if e >= lineEnd {
			return b.times[k], true
		}
	}
	return b.times[len(b.times)-1], true
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

// stripRankPrefix removes the rank prefix a launcher puts before each
// output line: "[1,0]<stdout>:" (Open MPI --tag-output) or "[0] "
// (mpiexec.mpich -l).
func stripRankPrefix(line string) string {
	if !strings.HasPrefix(line, "[") {
		return line
	}
	end := strings.Index(line, "]")
	if end < 0 {
		return line
	}
	rest := line[end+1:]
	for _, tag := range []string{"<stdout>:", "<stderr>:"} {
		if strings.HasPrefix(rest, tag) {
			return rest[len(tag):]
		}
	}
	return strings.TrimPrefix(rest, " ")
}
