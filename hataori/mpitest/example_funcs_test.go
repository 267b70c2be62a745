package mpitest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// TestSquares is the package example's multi-rank test (testSquares in
// example_test.go), run for real: 1, 2 and 4 ranks under every MPI the
// harness can launch, with its output checked.
func TestSquares(t *testing.T) { testSquares(t) }

// TestRing is a multi-rank test: the parent process starts real MPI jobs of
// 1, 2 and 4 ranks, and each rank runs the code after Init.
func TestRing(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n})
		}
		return
	}
	rank, size := mpitest.Init(t) // every MPI call stays on this goroutine
	world, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	if size == 1 {
		return
	}
	msg := []byte{byte(rank)}
	next, prev := (rank+1)%size, (rank+size-1)%size
	if rank%2 == 0 {
		err = world.Send(msg, next, 7)
		if err == nil {
			_, err = world.Recv(msg, prev, 7)
		}
	} else {
		in := make([]byte, 1)
		if _, err = world.Recv(in, prev, 7); err == nil {
			err = world.Send(msg, next, 7)
		}
		msg = in
	}
	if err != nil {
		t.Fatal(err)
	}
	if rank%2 == 1 && int(msg[0]) != prev {
		t.Fatalf("rank %d got %d from its predecessor, want %d", rank, msg[0], prev)
	}
}

// The examples below that take a *testing.T show test functions as they
// stand in a _test.go file; go test compiles them but cannot run them as
// examples. The package example's testSquares, which uses Run and Init, is
// run for real by TestSquares.

// Code shared by the parent and the ranks asks Child which one it runs in.
func ExampleChild() {
	if mpitest.Child() {
		fmt.Println("a rank of a job started by mpitest.Run")
	} else {
		fmt.Println("the go test process")
	}
	// Output: the go test process
}

// The parent half of a multi-rank test: one job per rank count, with
// extra environment for the ranks and lines the output must contain.
func ExampleRun() {
	TestBroadcast := func(t *testing.T) {
		if !mpitest.Child() {
			for _, n := range []int{2, 4} {
				mpitest.Run(t, mpitest.Config{
					Ranks:   n,
					Timeout: 30 * time.Second,
					Test:    "TestBroadcast",
					Env:     []string{"GOMAXPROCS=2"},
					Want:    []string{"rank 1 got 42"},
				})
			}
			return
		}
		// … the ranks' half: see ExampleInit
	}
	_ = TestBroadcast
}

// The ranks' half of a multi-rank test: Init locks the test goroutine to
// its thread and initialises MPI there, and registers finalisation (or, if
// the test failed, MPI_Abort) as a cleanup.
func ExampleInit() {
	TestBroadcast := func(t *testing.T) {
		if !mpitest.Child() {
			// … the parent's half: see ExampleRun
			return
		}
		rank, _ := mpitest.Init(t)
		world, err := hataori.World()
		if err != nil {
			t.Fatal(err)
		}
		v := hataori.None[int]()
		if rank == 0 {
			v = hataori.Some(42)
		}
		got, err := hataori.Broadcast(context.Background(), world, 0, v)
		if err != nil || got != 42 {
			t.Fatalf("Broadcast = %d, %v", got, err)
		}
		fmt.Printf("rank %d got %d\n", rank, got)
	}
	_ = TestBroadcast
}

// A test of a failure that ends the whole job expects its exit code, for
// example Hataori's MPI_Abort code for a panicking callback.
func ExampleExpectExit() {
	TestPanicAborts := func(t *testing.T) {
		if !mpitest.Child() {
			mpitest.ExpectExit(t, mpitest.Config{Ranks: 2, Test: "TestPanicAborts", Want: []string{"boom"}}, hataori.ExitPanic)
			return
		}
		rank, _ := mpitest.Init(t)
		world, _ := hataori.World()
		items := hataori.None[[]int]()
		if rank == 0 {
			items = hataori.Some([]int{1, 2, 3})
		}
		hataori.Pmap(context.Background(), world, nil, hataori.Options{}, items,
			func(int) (int, error) { panic("boom") })
		t.Fatal("Pmap returned after a panicking callback")
	}
	_ = TestPanicAborts
}

// A test of Ctrl-C during a call: the ranks print a line once they are
// inside the call, the harness then sends SIGINT to the launcher, and
// CheckOutput compares what the ranks printed. (Open MPI's mpirun exits
// with status 1 after a Ctrl-C, whatever the ranks return.)
func ExampleSignal() {
	TestInterrupt := func(t *testing.T) {
		if !mpitest.Child() {
			mpitest.Run(t, mpitest.Config{
				Ranks: 2, Test: "TestInterrupt",
				Signal:    &mpitest.Signal{Send: syscall.SIGINT, After: "waiting to be stopped", EndWithin: 30 * time.Second},
				ExitCodes: map[string]int{"openmpi": 1},
				CheckOutput: func(out mpitest.Output) error {
					for r, lines := range out.Ranks {
						if !slices.Contains(lines, "stopped") {
							return fmt.Errorf("rank %d did not print that it stopped", r)
						}
					}
					return nil
				},
			})
			return
		}
		rank, _ := mpitest.Init(t)
		ctx, stop := hataori.NotifyContext(context.Background())
		defer stop()
		world, _ := hataori.World()
		items := hataori.None[[]int]()
		if rank == 0 {
			items = hataori.Some([]int{1, 2, 3, 4})
		}
		_, err := hataori.PmapContext(ctx, world, nil, hataori.Options{}, items, func(ctx context.Context, x int) (int, error) {
			fmt.Println("waiting to be stopped")
			<-ctx.Done()
			return 0, ctx.Err()
		})
		if errors.Is(err, hataori.KindCanceled) {
			fmt.Println("stopped")
		}
	}
	_ = TestInterrupt
}

// A test package whose multi-rank tests might leave MPI initialised
// finalises it in TestMain.
func ExampleMain() {
	TestMain := func(m *testing.M) { mpitest.Main(m) }
	_ = TestMain
}

// A launcher started outside Run, for example mpirun with a Python script,
// gets the same hard timeout: Contain makes its cancellation end the
// launcher and everything it started.
func ExampleContain() {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// A stand-in for: mpirun -n 2 python3 script.py, hanging.
	cmd := exec.CommandContext(ctx, "sh", "-c", "echo started; sleep 60 & wait")
	mpitest.Contain(cmd)
	out, _ := cmd.Output()
	mpitest.Reap(cmd)
	fmt.Printf("%s%v\n", out, ctx.Err())
	// Output:
	// started
	// context deadline exceeded
}

// Reap kills whatever a contained command left behind once it has ended:
// here a background process of a shell that exited at once (as ranks can
// outlive a launcher that died).
func ExampleReap() {
	cmd := exec.CommandContext(context.Background(), "sh", "-c", "sleep 60 > /dev/null 2>&1 & echo $!")
	mpitest.Contain(cmd)
	out, err := cmd.Output()
	if err != nil {
		fmt.Println(err)
		return
	}
	mpitest.Reap(cmd)

	// The sleep is gone (or a zombie waiting for its new parent) at once.
	stat := "/proc/" + strings.TrimSpace(string(out)) + "/stat"
	alive := func() bool { b, err := os.ReadFile(stat); return err == nil && !strings.Contains(string(b), ") Z ") }
	for deadline := time.Now().Add(5 * time.Second); alive() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("left running:", alive())
	// Output: left running: false
}
