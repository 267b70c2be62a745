//go:build linux

package coll

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bellChildEnv, set in a child of TestBellAcrossProcesses, holds the
// parent's BellRef: the child opens it and rings it once.
const bellChildEnv = "HATAORI_TEST_BELL_REF"

func TestMain(m *testing.M) {
	if v := os.Getenv(bellChildEnv); v != "" {
		os.Exit(bellChild(v))
	}
	os.Exit(m.Run())
}

func bellChild(v string) int {
	f := strings.Fields(v)
	n := make([]uint64, len(f))
	for i := range f {
		n[i], _ = strconv.ParseUint(f[i], 10, 64)
	}
	if len(n) != 5 {
		return 3
	}
	ref := BellRef{PID: int(n[0]), FD: int(n[1]), Host: n[2], Nonce: n[3]}
	b, err := OpenBell(ref, n[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	time.Sleep(time.Duration(n[4])) // so that the parent is waiting
	b.Ring()
	return 0
}

// TestBellAcrossProcesses has a child process open this process's bell
// and ring it while this one waits on it: the wait must end, woken, long
// before its timeout.
func TestBellAcrossProcesses(t *testing.T) {
	b, err := NewBell(42, 0x5eed)
	if err != nil {
		t.Fatal(err)
	}
	r := b.Ref()
	seen := b.Seq()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %d %d %d", bellChildEnv, r.PID, r.FD, r.Host, r.Nonce, int64(200*time.Millisecond)))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for b.Seq() == seen && time.Since(t0) < 20*time.Second {
		b.Wait(seen, 20*time.Second) // a signal to the thread ends it early
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	if b.Seq() == seen {
		t.Fatal("the child's ring never reached this process's bell")
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Fatalf("the wait ended after %v: the ring did not wake it", el)
	}
}

// TestOpenBellRefuses: another host's bell, this process's own, a wrong
// nonce and a descriptor that is no bell are refused.
func TestOpenBellRefuses(t *testing.T) {
	b, err := NewBell(7, 99)
	if err != nil {
		t.Fatal(err)
	}
	r := b.Ref()
	if _, err := OpenBell(r, 7); err == nil {
		t.Error("opened this process's own bell")
	}
	other := r
	other.PID = os.Getppid() // the go tool: no bell at that descriptor
	if _, err := OpenBell(other, 7); err == nil {
		t.Error("opened a descriptor of the parent process as a bell")
	}
	cases := []struct {
		name string
		ref  BellRef
		host uint64
	}{
		{"other host", r, 8},
		{"no host key", BellRef{PID: r.PID, FD: r.FD, Nonce: r.Nonce}, 0},
	}
	for _, c := range cases {
		if _, err := OpenBell(c.ref, c.host); err == nil {
			t.Errorf("%s: opened", c.name)
		}
	}
	// A wrong nonce, through a child that is another process.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %d %d %d", bellChildEnv, r.PID, r.FD, r.Host, r.Nonce+1, 0))
	if err := cmd.Run(); err == nil {
		t.Error("a child opened the bell with a wrong nonce")
	}
}
