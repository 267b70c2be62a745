//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestPmapPanicEndsJobWithin10s runs the rank body of TestPmapPanicAborts
// as a 4-rank job (2 per host in multi-host mode) that must end with
// ExitPanic within 10 s, launcher start-up included: the job's Timeout is
// the bound, and a job killed at its timeout fails the test.
func TestPmapPanicEndsJobWithin10s(t *testing.T) {
	if mpitest.Child() {
		t.Skip("the ranks run TestPmapPanicAborts")
	}
	mpitest.Run(t, mpitest.Config{Ranks: 4, Timeout: 10 * time.Second, Test: "TestPmapPanicAborts",
		// As in TestPmapPanicAborts: MPICH may report 1, the message names 70.
		ExitCodes: map[string]int{"openmpi": ExitPanic, "mpich": mpitest.AnyFailure}, Want: []string{
			"Pmap callback panicked: item 3 exploded",
			fmt.Sprintf("aborting the MPI job with exit code %d", ExitPanic)}})
}

// killNote is what the rank that kills itself prints first.
const killNote = "sends itself SIGKILL in the middle of Pmap"

// TestPmapKilledRankEndsJob checks that a rank killed (SIGKILL, so no
// abort, no goodbye) in the middle of a Pmap ends the whole job, with a
// failure reported by the launcher, within 30 s: the job's Timeout is the
// bound, and a job still running at 30 s is killed and fails the test. The
// last rank kills itself, which in multi-host mode (4 ranks, 2 per host)
// is on the other host than the root and the launcher.
func TestPmapKilledRankEndsJob(t *testing.T) {
	if !mpitest.Child() {
		mpitest.ExpectExit(t, mpitest.Config{Ranks: 4, Timeout: 30 * time.Second, Test: "TestPmapKilledRankEndsJob",
			Want: []string{killNote}}, mpitest.AnyFailure)
		return
	}
	e := newRankEnv(t)
	victim := e.size - 1
	var calls atomic.Int64
	_, err := Pmap(context.Background(), e.world, e.dom, Options{Mode: Outer}, e.items(400), func(x int) (int, error) {
		time.Sleep(2 * time.Millisecond)
		if e.rank == victim && calls.Add(1) == 5 {
			fmt.Fprintf(os.Stderr, "rank %d of %d (pid %d, addresses %v) %s\n", e.rank, e.size, os.Getpid(), hostAddrs(), killNote)
			time.Sleep(200 * time.Millisecond) // let the launcher forward the line
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
		return x, nil
	})
	t.Errorf("rank %d: Pmap returned (%v) although rank %d was killed", e.rank, err, victim)
}

// hostAddrs lists this host's non-loopback IPv4 addresses.
func hostAddrs() []string {
	var out []string
	as, _ := net.InterfaceAddrs()
	for _, a := range as {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
			out = append(out, ip.IP.String())
		}
	}
	return out
}
