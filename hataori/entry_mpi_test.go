//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// entryCaseEnv selects the case a rank of TestEntryTimeout runs.
const entryCaseEnv = "HATAORI_TEST_ENTRY_CASE"

// entryStarted is printed by rank 0 right before it enters the call that
// rank 1 never enters; the job must end within a bound of it.
const entryStarted = "rank 0 enters the collective call"

// TestEntryTimeout checks that a rank whose peer never enters the same
// collective call ends the job within the entry bound, with a diagnosis
// and exit code ExitTimeout, instead of waiting for ever: a peer that never
// calls (the bound set by SetEntryTimeout), a peer whose call failed its
// local entry check because it came from another goroutine (the bound set
// by HATAORI_ENTRY_TIMEOUT; that peer's error names the fix), and a
// Broadcast whose peer never calls.
func TestEntryTimeout(t *testing.T) {
	if !mpitest.Child() {
		for _, c := range []struct{ name, env string }{
			{"never", ""},
			{"other-goroutine", EntryTimeoutEnv + "=2s"},
			{"broadcast", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				env := []string{entryCaseEnv + "=" + c.name}
				if c.env != "" {
					env = append(env, c.env)
				}
				want := []string{
					"did not enter the same collective call",
					fmt.Sprintf("aborting the MPI job with exit code %d", ExitTimeout),
				}
				if c.name == "other-goroutine" {
					want = append(want, "not the MPI main thread: "+mainThreadFix)
				}
				mpitest.Run(t, mpitest.Config{Ranks: 2, Timeout: 90 * time.Second, Env: env,
					ExitCodes: map[string]int{"openmpi": ExitTimeout, "mpich": mpitest.AnyFailure},
					Want:      want, EndAfter: entryStarted, EndWithin: 25 * time.Second})
			})
		}
		return
	}
	e := newRankEnv(t)
	c := os.Getenv(entryCaseEnv)
	if c != "other-goroutine" {
		SetEntryTimeout(2 * time.Second)
	}
	if e.rank != 0 {
		if c == "other-goroutine" {
			res := make(chan error)
			go func() {
				_, err := Pmap(context.Background(), e.world, nil, Options{}, None[[]int](), func(x int) (int, error) { return x, nil })
				res <- err
			}()
			err := <-res
			if !errors.Is(err, ErrNotMainThread) || !strings.Contains(err.Error(), mainThreadFix) {
				t.Errorf("Pmap from another goroutine = %v, want ErrNotMainThread naming the fix", err)
			}
			fmt.Fprintf(os.Stderr, "rank 1: %v\n", err)
		}
		// Never enter the call: rank 0's bound must end the job.
		time.Sleep(time.Hour)
		return
	}
	fmt.Fprintln(os.Stderr, entryStarted)
	var err error
	if c == "broadcast" {
		_, err = Broadcast(context.Background(), e.world, 0, Some(42))
	} else {
		_, err = Pmap(context.Background(), e.world, nil, Options{}, Some([]int{1, 2, 3}), func(x int) (int, error) { return x, nil })
	}
	t.Errorf("rank 0's call returned %v although rank 1 never entered it", err)
}
