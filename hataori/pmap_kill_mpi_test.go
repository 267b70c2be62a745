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

// panicNote is the first line a rank prints when its callback panics in
// TestPmapPanicAborts.
const panicNote = "Pmap callback panicked: item 3 exploded"

// TestPmapPanicEndsJobWithin10s runs the rank body of TestPmapPanicAborts
// as a 4-rank job (2 per host in multi-host mode) that must end with
// ExitPanic within 10 s of the rank reporting the panic (start-up, slow on
// a loaded machine, does not count; the whole job is bounded by its
// Timeout).
func TestPmapPanicEndsJobWithin10s(t *testing.T) {
	if mpitest.Child() {
		t.Skip("the ranks run TestPmapPanicAborts")
	}
	mpitest.Run(t, mpitest.Config{Ranks: 4, Timeout: 60 * time.Second, Test: "TestPmapPanicAborts",
		EndAfter: panicNote, EndWithin: 10 * time.Second,
		// As in TestPmapPanicAborts: MPICH may report 1, the message names 70.
		ExitCodes: map[string]int{"openmpi": ExitPanic, "mpich": mpitest.AnyFailure}, Want: []string{
			panicNote,
			fmt.Sprintf("aborting the MPI job with exit code %d", ExitPanic)}})
}

// killNote is what the rank that kills itself prints first.
const killNote = "sends itself SIGKILL in the middle of Pmap"

// TestPmapKilledRankEndsJob checks that a rank killed (SIGKILL, so no
// abort, no goodbye) in the middle of a Pmap ends the whole job, with a
// failure reported by the launcher, within 30 s of the rank announcing
// its death (a job still running at its Timeout is killed and fails the
// test too). The last rank kills itself, which in multi-host mode (4
// ranks, 2 per host) is on the other host than the root and the launcher.
// Every other rank's first batch never ends, so the victim gets every
// later batch and certainly reaches its fifth item; it dies only once its
// launcher has read the announcement (WaitStderrRead).
func TestPmapKilledRankEndsJob(t *testing.T) {
	if !mpitest.Child() {
		mpitest.ExpectExit(t, mpitest.Config{Ranks: 4, Timeout: 60 * time.Second,
			EndAfter: killNote, EndWithin: 30 * time.Second}, mpitest.AnyFailure)
		return
	}
	e := newRankEnv(t)
	victim := e.size - 1
	var calls atomic.Int64
	_, err := Pmap(context.Background(), e.world, e.dom, Options{Mode: Outer}, e.items(400), func(x int) (int, error) {
		if e.rank != victim {
			select {} // the job ends with the victim
		}
		time.Sleep(2 * time.Millisecond)
		if calls.Add(1) == 5 {
			fmt.Fprintf(os.Stderr, "rank %d of %d (pid %d, addresses %v) %s\n", e.rank, e.size, os.Getpid(), hostAddrs(), killNote)
			// Once the launcher holds the line (bounded: a line lost fails
			// the job's EndAfter check, it does not pass by luck).
			WaitStderrRead(10 * time.Second)
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
