package mpitest

import (
	"strings"
	"testing"
	"time"
)

func TestStripRankPrefix(t *testing.T) {
	cases := map[string]string{
		"[1,0]<stdout>:--- PASS: TestX (0.1s)": "--- PASS: TestX (0.1s)",
		"[1,3]<stderr>:panic: boom":            "panic: boom",
		"[2] FAIL":                             "FAIL",
		"plain line":                           "plain line",
		"[unterminated":                        "[unterminated",
	}
	for in, want := range cases {
		if got := stripRankPrefix(in); got != want {
			t.Errorf("stripRankPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	pass2 := "[0] === RUN   TestX\n[0] --- PASS: TestX (0.10s)\n[1] --- PASS: TestX (0.11s)\n[0] PASS\n[1] PASS\n"
	cfg := Config{Ranks: 2, Test: "TestX"}
	cases := []struct {
		name, output, want string
		code               int
		cfg                Config
	}{
		{"pass", pass2, "", 0, cfg},
		{"exit code", pass2, "exit code 3", 3, cfg},
		{"one rank", "[0] --- PASS: TestX (0.10s)\n", "1 of 2 ranks", 0, cfg},
		{"prefix of another test", "--- PASS: TestXY (0.1s)\n--- PASS: TestXY (0.1s)\n", "0 of 2 ranks", 0, cfg},
		{"fail line", pass2 + "[1,1]<stdout>:--- FAIL: TestX (0.1s)\n", "a rank failed", 0, cfg},
		{"bare FAIL", pass2 + "[1] FAIL\n", "a rank failed", 0, cfg},
		{"panic", pass2 + "[1,0]<stderr>:panic: boom\n", "a rank panicked", 0, cfg},
		{"no tests", "testing: warning: no tests to run\nPASS\n", "no test matched", 0, cfg},
		{"want missing", pass2, `output lacks "hello"`, 0, Config{Ranks: 2, Test: "TestX", Want: []string{"hello"}}},
		{"want present", pass2 + "hello\n", "", 0, Config{Ranks: 2, Test: "TestX", Want: []string{"hello"}}},
		{"expected code", "panic: x", "", 70, Config{Ranks: 2, Test: "TestX", ExitCode: 70}},
		{"wrong code", "", "exit code 1, want 70", 1, Config{Ranks: 2, Test: "TestX", ExitCode: 70}},
		{"any failure", "", "", 1, Config{Ranks: 2, Test: "TestX", ExitCode: AnyFailure}},
		{"any failure but success", pass2, "exit code 0, want a failure", 0, Config{Ranks: 2, Test: "TestX", ExitCode: AnyFailure}},
		{"failure by the test timeout", "[3] panic: test timed out after 9s\n", "own test timeout ended the job", 2, Config{Ranks: 4, Test: "TestX", ExitCode: AnyFailure}},
		{"code by the test timeout", "[1,3]<stderr>:panic: test timed out after 9s\n", "own test timeout", 70, Config{Ranks: 4, Test: "TestX", ExitCode: 70}},
	}
	for _, c := range cases {
		got := check(c.cfg, c.code, c.output)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: check = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTestOrDefault checks Config.Test's default: the calling test's
// top-level name, from a subtest too, while an explicit name is kept.
func TestTestOrDefault(t *testing.T) {
	cases := []struct{ test, name, want string }{
		{"", "TestRing", "TestRing"},
		{"", "TestRing/openmpi-n4", "TestRing"},
		{"", "TestRing/a/b", "TestRing"},
		{"TestOther", "TestRing/sub", "TestOther"},
	}
	for _, c := range cases {
		if got := testOrDefault(c.test, c.name); got != c.want {
			t.Errorf("testOrDefault(%q, %q) = %q, want %q", c.test, c.name, got, c.want)
		}
	}
	t.Run("sub", func(t *testing.T) {
		if got := testOrDefault("", t.Name()); got != "TestTestOrDefault" {
			t.Errorf("from subtest %s: default %q, want TestTestOrDefault", t.Name(), got)
		}
	})
}

// TestStartJobTimeout runs a fake launcher (sh) whose job outlives the
// timeout: the job must be reported as timed out with its output so far,
// and its background process killed with the process group.
func TestStartJobTimeout(t *testing.T) {
	fake := launcher{name: "fake", bin: "sh", args: func(int) []string {
		return []string{"-c", "echo started; sleep 60 & sleep 60", "sh"}
	}}
	r := startJob("/bin/sh", pairing{launcher: fake, lib: fake}, site{}, nil, "prog",
		Config{Ranks: 1, Test: "TestX", Timeout: 300 * time.Millisecond})
	if !r.timedOut || !strings.Contains(r.output, "started") {
		t.Fatalf("startJob = %+v, want a timeout with the output so far", r)
	}
}

// TestStartJobExitCode checks that the launcher's exit code and output are
// reported, and that the program and test flags reach it.
func TestStartJobExitCode(t *testing.T) {
	fake := launcher{name: "fake", bin: "sh", args: func(int) []string {
		return []string{"-c", `echo "$@" "$` + ChildEnv + `"; exit 3`, "sh"}
	}}
	r := startJob("/bin/sh", pairing{launcher: fake, lib: fake}, site{}, nil, "prog",
		Config{Ranks: 1, Test: "TestX", Timeout: 10 * time.Second})
	if r.err != nil || r.timedOut || r.code != 3 {
		t.Fatalf("startJob = %+v, want exit code 3", r)
	}
	for _, w := range []string{"prog", "-test.run=^TestX$", "-test.count=1", " 1\n"} {
		if !strings.Contains(r.output, w) {
			t.Errorf("output %q lacks %q", r.output, w)
		}
	}
}

// TestStartJobTimesEndAfterMark checks that the time from the first line
// with Config.EndAfter to the job's end is measured from that line's
// arrival, not from the job's start.
func TestStartJobTimesEndAfterMark(t *testing.T) {
	job := func(script string) jobResult {
		fake := launcher{name: "fake", bin: "sh", args: func(int) []string { return []string{"-c", script, "sh"} }}
		return startJob("/bin/sh", pairing{launcher: fake, lib: fake}, site{}, nil, "prog",
			Config{Ranks: 1, Test: "TestX", Timeout: 10 * time.Second, EndAfter: "the mark", EndWithin: time.Second})
	}
	// Late mark, quick end: short, although the job took longer.
	r := job("sleep 0.8; echo 'x the mark y'; echo after")
	if r.sinceMark < 0 || r.sinceMark > 400*time.Millisecond || r.elapsed < 800*time.Millisecond {
		t.Errorf("late mark: sinceMark %v, elapsed %v; want under 400ms of a job of at least 800ms", r.sinceMark, r.elapsed)
	}
	// Early mark, slow end.
	r = job("echo the mark; sleep 0.8")
	if r.sinceMark < 700*time.Millisecond {
		t.Errorf("early mark: sinceMark %v, want at least 700ms", r.sinceMark)
	}
	// A mark split over two writes counts from the second.
	r = job("printf 'the ma'; sleep 0.8; echo 'rk'")
	if r.sinceMark < 0 || r.sinceMark > 400*time.Millisecond {
		t.Errorf("split mark: sinceMark %v, want under 400ms", r.sinceMark)
	}
	if r = job("echo nothing"); r.sinceMark != -1 {
		t.Errorf("no mark: sinceMark %v, want -1", r.sinceMark)
	}
}
