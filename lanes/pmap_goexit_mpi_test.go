package lanes_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/hataori/hataori-go/lanes"
)

// TestPmapLanesGoexitAborts runs a 1-rank job on one lane whose callback
// calls runtime.Goexit (as testing.T.FailNow does): the lane's batch must
// still end, so that the coordinator sees the recorded Goexit and aborts
// the job with ExitPanic instead of waiting forever for the batch.
func TestPmapLanesGoexitAborts(t *testing.T) {
	if !mpitest.Child() {
		mpitest.Run(t, mpitest.Config{
			Ranks:     1,
			Timeout:   60 * time.Second,
			ExitCodes: map[string]int{"openmpi": hataori.ExitPanic, "mpich": mpitest.AnyFailure},
			Want: []string{
				"Pmap callback panicked: runtime.Goexit called in a callback",
				fmt.Sprintf("aborting the MPI job with exit code %d", hataori.ExitPanic),
			},
		})
		return
	}
	mpitest.Init(t)
	comm, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	l, err := lanes.New([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]int, 8)
	_, _ = lanes.PmapLanes(context.Background(), comm, l, hataori.Options{BatchSize: 4}, hataori.Some(items),
		func(x, _ int) (int, error) {
			runtime.Goexit()
			return x, nil
		})
	t.Fatal("PmapLanes returned instead of aborting the job")
}
