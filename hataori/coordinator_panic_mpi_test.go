//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// coordCaseEnv selects the case a rank of TestPmapCoordinatorPanicAborts
// runs.
const coordCaseEnv = "HATAORI_TEST_COORD_CASE"

// explosive panics when msgpack encodes it: user code that runs on the
// coordinator goroutine of a collective call, outside any callback.
type explosive struct{ V int }

func (e explosive) EncodeMsgpack(*msgpack.Encoder) error {
	panic(fmt.Sprintf("encoder of explosive %d exploded", e.V))
}

func (e *explosive) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt()
	e.V = v
	return err
}

// abortWant is the abort line every coordinator panic must print.
var abortWant = fmt.Sprintf("aborting the MPI job with exit code %d", ExitPanic)

// coordinatorAborts runs test as a 2-rank job expecting an ExitPanic
// abort whose output holds want (under MPICH the code is checked through
// the message, as in TestPmapPanicAborts).
func coordinatorAborts(t *testing.T, test, env string, want ...string) {
	t.Helper()
	cfg := mpitest.Config{Ranks: 2, Timeout: 60 * time.Second, Test: test,
		ExitCodes: map[string]int{"openmpi": ExitPanic, "mpich": mpitest.AnyFailure},
		Want:      append(want, abortWant)}
	if env != "" {
		cfg.Env = []string{coordCaseEnv + "=" + env}
	}
	mpitest.Run(t, cfg)
}

// TestPmapCoordinatorPanicAborts checks that a panic in user code outside
// the callbacks ends the whole job with ExitPanic instead of leaving the
// root waiting: a result type's msgpack encoder (run on a remote rank's
// slot, which encodes its RESULT), an item type's encoder (run on the
// root's coordinator, which encodes every TASK), and a runtime.Goexit in an
// MPI-only callback (run on the rank's helper slot).
func TestPmapCoordinatorPanicAborts(t *testing.T) {
	if !mpitest.Child() {
		t.Run("encoder", func(t *testing.T) {
			coordinatorAborts(t, "TestPmapCoordinatorPanicAborts", "encoder",
				"Pmap callback panicked: encoder of explosive 7 exploded",
				"callback panic in Pmap")
		})
		t.Run("item-encoder", func(t *testing.T) {
			coordinatorAborts(t, "TestPmapCoordinatorPanicAborts", "item-encoder",
				"panic on the calling goroutine of Pmap: encoder of explosive 3 exploded",
				"panic in user code running on the coordinator of Pmap")
		})
		t.Run("goexit", func(t *testing.T) {
			coordinatorAborts(t, "TestPmapCoordinatorPanicAborts", "goexit",
				"Pmap callback panicked: runtime.Goexit called in a callback",
				"callback panic in Pmap")
		})
		return
	}
	e := newRankEnv(t)
	ctx := context.Background()
	switch c := os.Getenv(coordCaseEnv); c {
	case "encoder":
		// The root's own batch never ends, so every other batch goes to
		// rank 1, whose coordinator encodes the results: the encoder
		// panics there.
		_, _ = Pmap(ctx, e.world, e.dom, Options{Mode: Outer}, e.items(6), func(x int) (explosive, error) {
			if e.rank == 0 {
				select {}
			}
			return explosive{V: 7}, nil
		})
	case "item-encoder":
		// The root's own slot never ends, so the next batch goes to rank 1:
		// the root's coordinator encodes its TASK, and the encoder panics.
		var items Maybe[[]explosive]
		if e.rank == 0 {
			items = Some([]explosive{{3}, {3}, {3}, {3}})
		}
		_, _ = Pmap(ctx, e.world, nil, Options{}, items, func(x explosive) (int, error) {
			if e.rank == 0 {
				select {}
			}
			return x.V, nil
		})
	case "goexit":
		// MPI-only: callbacks run on the rank's helper slot. The root's own
		// slot never ends, so rank 1 gets the other batches, and its
		// callback calls runtime.Goexit (as t.FailNow would).
		_, _ = Pmap(ctx, e.world, nil, Options{}, e.items(50), func(x int) (int, error) {
			if e.rank == 0 {
				select {}
			}
			runtime.Goexit()
			return x, nil
		})
	default:
		t.Fatalf("unknown %s %q", coordCaseEnv, c)
	}
	t.Error("Pmap returned after a panic on a coordinator")
}

// TestDataCoordinatorPanicAborts checks that a Gather whose value's
// msgpack encoder panics on a non-root rank (while that rank prepares its
// frame, with the root waiting for the preflight agreement) ends the whole
// job with ExitPanic instead of leaving the root waiting.
func TestDataCoordinatorPanicAborts(t *testing.T) {
	if !mpitest.Child() {
		coordinatorAborts(t, "TestDataCoordinatorPanicAborts", "",
			"panic on the calling goroutine of Gather: encoder of explosive 1 exploded",
			"panic in user code running on the coordinator of Gather")
		return
	}
	rank, _ := mpitest.Init(t)
	// The root's own value is moved, never encoded; rank 1 encodes its own.
	_, _ = Gather(context.Background(), pmapWorld(t), 0, explosive{V: rank})
	t.Error("Gather returned after a panic on a coordinator")
}
