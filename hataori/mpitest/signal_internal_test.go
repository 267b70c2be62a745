package mpitest

import (
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSplitRankPrefix(t *testing.T) {
	cases := []struct {
		line, body string
		rank       int
		ok         bool
	}{
		{"[1,3]<stdout>:hello", "hello", 3, true},
		{"[1,0]<stderr>:--- PASS: TestX (0.1s)", "--- PASS: TestX (0.1s)", 0, true},
		{"[2] hello [3] x", "hello [3] x", 2, true},
		{"[12] ", "", 12, true},
		{"[0]", "", 0, true},
		{"[mpiexec@vm] Sending Ctrl-C to processes as requested", "", 0, false},
		{"[proxy:0:0@vm] main (pm/pmiserv/pmip.c:169): error", "", 0, false},
		{"[1,2]hello", "", 0, false},
		{"[x,2]<stdout>:hello", "", 0, false},
		{"[2]hello", "", 0, false},
		{"plain", "", 0, false},
		{"[unterminated", "", 0, false},
		{"[] x", "", 0, false},
	}
	for _, c := range cases {
		r, body, ok := splitRankPrefix(c.line)
		if ok != c.ok || (ok && (r != c.rank || body != c.body)) {
			t.Errorf("splitRankPrefix(%q) = %d, %q, %v; want %d, %q, %v", c.line, r, body, ok, c.rank, c.body, c.ok)
		}
	}
}

func TestSplitOutput(t *testing.T) {
	out := "[0] a\n[mpiexec@vm] noise\n[1] b\n[0] c\n[7] far\n\n[1,1]<stderr>:d\n"
	got := splitOutput(out, 2, "mpich")
	want := Output{Launcher: "mpich", Ranks: [][]string{{"a", "c"}, {"b", "d"}}, Other: []string{"[mpiexec@vm] noise", "[7] far"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("splitOutput = %+v, want %+v", got, want)
	}
}

// fakeJob runs script as a fake launcher (sh) of a ranks-rank job with
// Config.Signal SIGINT after "inside".
func fakeJob(script string, ranks int, timeout time.Duration) jobResult {
	fake := launcher{name: "fake", bin: "sh", args: func(int) []string { return []string{"-c", script, "sh"} }}
	return startJob("/bin/sh", pairing{launcher: fake, lib: fake}, site{}, nil, "prog", Config{
		Ranks: ranks, Test: "TestX", Timeout: timeout,
		Signal: &Signal{Send: syscall.SIGINT, After: "inside", EndWithin: 5 * time.Second},
	})
}

// TestStartJobSignal: the signal goes to the launcher once every rank
// printed the line, and not before. Lines without a rank prefix, or of a
// rank outside the job, do not count. Were the signal sent after rank 0's
// line alone, the trap would end the job during the sleep, before rank 1
// prints its line.
func TestStartJobSignal(t *testing.T) {
	script := `trap 'echo "[1] got INT"; echo "[0] done"; exit 0' INT
echo "[0] inside"; echo "[mpiexec@x] inside"; echo "[5] inside"; echo "[1] outside"; sleep 1; echo "[1,1]<stdout>:inside"
while :; do sleep 0.02; done`
	r := fakeJob(script, 2, 20*time.Second)
	if r.err != nil || r.timedOut || r.code != 0 {
		t.Fatalf("startJob = %+v, want a job that ends with code 0 after the signal", r)
	}
	if !r.signaled || r.sinceSignal < 0 || r.sinceSignal > 5*time.Second || len(r.unmarked) != 0 {
		t.Errorf("signaled %v, since %v, unmarked %v; want sent, within 5s, every rank seen", r.signaled, r.sinceSignal, r.unmarked)
	}
	i, j := strings.Index(r.output, "[1,1]<stdout>:inside"), strings.Index(r.output, "[1] got INT")
	if i < 0 || j < i {
		t.Errorf("output %q: want rank 1's line before the trap's", r.output)
	}
}

// TestStartJobSignalNeverSent: when a rank never prints the line the
// signal is never sent, and the job's result says which ranks lacked it.
func TestStartJobSignalNeverSent(t *testing.T) {
	r := fakeJob(`trap 'echo "[0] got INT"; exit 0' INT; echo "[0] inside"; echo "[2] inside"; sleep 60 & wait`, 3, 500*time.Millisecond)
	if !r.timedOut || r.signaled || !reflect.DeepEqual(r.unmarked, []int{1}) {
		t.Fatalf("timedOut %v, signaled %v, unmarked %v; want a timeout, no signal, rank 1 unmarked", r.timedOut, r.signaled, r.unmarked)
	}
	if strings.Contains(r.output, "got INT") {
		t.Errorf("the launcher got the signal: %q", r.output)
	}
	cfg := Config{Signal: &Signal{Send: syscall.SIGINT, After: "inside"}}
	if s := signalState(cfg, r); !strings.Contains(s, "never sent") || !strings.Contains(s, "[1]") {
		t.Errorf("signalState = %q, want it to say the signal was never sent and name rank 1", s)
	}
}
