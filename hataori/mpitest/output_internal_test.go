package mpitest

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJoinerSplitLines checks that lines Open MPI's --tag-output split
// into pieces, each with its own tag, come back whole: a line cut in two
// (the case a CI run met), a piece of another rank between the halves, a
// line never ended, and lines without tags.
func TestJoinerSplitLines(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"cut in two",
			"[1,0]<stderr>:hataori: panic in user code running on the coor[1,0]<stderr>:dinator of Pmap; aborting\n",
			[]string{"[1,0]<stderr>:hataori: panic in user code running on the coordinator of Pmap; aborting"}},
		{"another rank between the halves",
			"[1,0]<stdout>:--- PA[1,1]<stdout>:--- PASS: TestX (0.1s)\n[1,0]<stdout>:SS: TestX (0.2s)\n",
			[]string{"[1,1]<stdout>:--- PASS: TestX (0.1s)", "[1,0]<stdout>:--- PASS: TestX (0.2s)"}},
		{"same rank, other stream, keeps its own line",
			"[1,0]<stdout>:ab[1,0]<stderr>:whole\n[1,0]<stdout>:cd\n",
			[]string{"[1,0]<stderr>:whole", "[1,0]<stdout>:abcd"}},
		{"never ended", "[1,2]<stderr>:last words[1,3]<stdout>:x\n",
			[]string{"[1,3]<stdout>:x", "[1,2]<stderr>:last words"}},
		{"MPICH's labels", "[0] abc[1] abc[0] def\n[1] def\n",
			[]string{"[0] abcdef", "[1] abcdef"}},
		{"unlabelled lines pass", "-----\nitems [3] and [4] \n",
			[]string{"-----", "items [3] and [4] "}},
	}
	for _, c := range cases {
		var b stampedBuffer
		b.Write([]byte(c.in))
		got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: lines %q, want %q", c.name, got, c.want)
		}
	}
}

// TestArrivalOfSplitLine checks that a line split by the launcher is found
// by arrival, at the write that ended it, and that check sees its text.
func TestArrivalOfSplitLine(t *testing.T) {
	var b stampedBuffer
	b.Write([]byte("[1,0]<stdout>:=== RUN TestX\n[1,0]<stdout>:the ma"))
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	b.Write([]byte("[1,0]<stdout>:rk\n"))
	at, ok := b.arrival("the mark")
	if !ok || at.Before(mid) {
		t.Fatalf("arrival of the split line: %v %v, want at or after the second write (%v)", at, ok, mid)
	}
	cfg := Config{Ranks: 1, Test: "TestX", ExitCode: 70, Want: []string{"the mark"}}
	if p := check(cfg, 70, b.String()); p != "" {
		t.Errorf("check of the joined output: %s", p)
	}
	if _, ok := b.arrival("nowhere"); ok {
		t.Error("arrival found a line that is not in the output")
	}
}

// TestWatchSeesSplitLine checks that a signal's line split by the launcher
// still counts for its rank.
func TestWatchSeesSplitLine(t *testing.T) {
	b := stampedBuffer{watch: newLineWatch("ready for the signal", 2)}
	b.Write([]byte("[1,0]<stdout>:ready for the sig[1,1]<stdout>:ready for the signal\n"))
	if got := b.unmarked(); !slices.Equal(got, []int{0}) {
		t.Fatalf("unmarked %v after rank 0's first half, want [0]", got)
	}
	b.Write([]byte("[1,0]<stdout>:nal\n"))
	select {
	case <-b.watch.fired:
	default:
		t.Errorf("the watch did not fire; unmarked %v", b.unmarked())
	}
}
