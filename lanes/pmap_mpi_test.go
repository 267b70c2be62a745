package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/hataori/mpitest"
	"github.com/hataori/hataori-go/lanes"
)

// lanesEnv passes the lane count of a job to its ranks.
const lanesEnv = "HATAORI_LANES_COUNT"

// TestPmapLanesRanks runs PmapLanes as real MPI jobs: 1 rank with 1 and 2
// lanes, 2 and 4 ranks with 2 lanes, under every launcher/library pairing
// of the build (skipped, or failed under HATAORI_REQUIRE_MPI=1, without
// MPI). A job passes when every rank passes.
func TestPmapLanesRanks(t *testing.T) {
	if mpitest.Child() {
		pmapLanesRank(t)
		return
	}
	for _, job := range []struct{ ranks, lanes int }{{1, 1}, {1, 2}, {2, 2}, {4, 2}} {
		t.Run(fmt.Sprintf("ranks%d-lanes%d", job.ranks, job.lanes), func(t *testing.T) {
			mpitest.Run(t, mpitest.Config{
				Ranks:   job.ranks,
				Timeout: 3 * time.Minute,
				Env:     []string{lanesEnv + "=" + strconv.Itoa(job.lanes)},
				// Every rank logs it: the lane count reached the ranks.
				Want: []string{fmt.Sprintf("size=%d lanes=%d", job.ranks, job.lanes)},
			})
		})
	}
}

// pmapLanesRank is the rank code; every MPI call (through Hataori) is made
// on this test goroutine, which mpitest.Init locks to the MPI main thread.
// Every collective call completes on every rank before any check that
// could stop this rank early (a failed rank aborts the whole job).
func pmapLanesRank(t *testing.T) {
	rank, size := mpitest.Init(t)
	comm, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	k, err := strconv.Atoi(os.Getenv(lanesEnv))
	if err != nil || k < 1 {
		t.Fatalf("%s=%q", lanesEnv, os.Getenv(lanesEnv))
	}
	t.Logf("rank=%d size=%d lanes=%d", rank, size, k)
	engines := make([]*poolEngine, k)
	for i := range engines {
		engines[i] = newPoolEngine(i, 1+2*(i%2)) // 1, 3, 1, … pool workers
	}
	t.Cleanup(func() {
		for _, e := range engines {
			e.close()
		}
	})
	l, err := lanes.New(engines)
	if err != nil {
		t.Fatal(err)
	}
	coordinator := threadID()
	ctx := context.Background()
	opts := hataori.Options{Root: 0, BatchSize: 3}
	// onRoot supplies xs on the root only, as PmapLanes wants.
	onRoot := func(xs []int) hataori.Maybe[[]int] {
		if rank == opts.Root {
			return hataori.Some(xs)
		}
		return hataori.None[[]int]()
	}

	// 1. Known results in input order; every item exactly once over all
	// ranks; each engine used on one lane thread, never the coordinator's.
	const n = 97
	items := make([]int, n)
	for i := range items {
		items[i] = (i * 37) % 1000 // distinct, not monotone
	}
	counts := make([]atomic.Int32, n)
	var threads threadLog[*poolEngine]
	f := func(x int, e *poolEngine) (int64, error) {
		counts[indexOf(items, x)].Add(1)
		threads.record(e)
		return e.sumSquares(x)
	}
	got, pmapErr := lanes.PmapLanes(ctx, comm, l, opts, onRoot(items), f)
	local := make([]int32, n)
	for i := range counts {
		local[i] = counts[i].Load()
	}
	all, gatherErr := hataori.Gather(ctx, comm, 0, local)

	// 2. Error convergence: items 17 and 23 fail on whichever rank runs
	// them; every rank must return the same error, for item 17.
	errBad := errors.New("bad item")
	failing := func(x int, e *poolEngine) (int64, error) {
		if x == 17 || x == 23 {
			return 0, fmt.Errorf("item %d on rank %d: %w", x, rank, errBad)
		}
		return e.sumSquares(x)
	}
	seq := make([]int, 40)
	for i := range seq {
		seq[i] = i
	}
	_, userErr := lanes.PmapLanes(ctx, comm, l, opts, onRoot(seq), failing)
	msgs, msgErr := hataori.Gather(ctx, comm, 0, errText(userErr))

	// 3. The lanes (and warm engines) serve a further call.
	again, againErr := lanes.PmapLanes(ctx, comm, l, opts, onRoot(seq), sumSquares)

	var pe *hataori.PmapError

	// 4. Admission is collective: the last rank's lanes are busy (a local
	// run holds them), so every rank fails the preflight identically.
	hold, held := make(chan struct{}), make(chan error, 1)
	if rank == size-1 {
		entered := make(chan struct{})
		go func() {
			held <- l.Run(ctx, func(lane int, _ *poolEngine, c *lanes.Control) error {
				if lane == 0 {
					close(entered)
				}
				<-hold
				return nil
			})
		}()
		<-entered
	}
	_, busyErr := lanes.PmapLanes(ctx, comm, l, opts, onRoot(seq), sumSquares)
	if rank == size-1 {
		close(hold)
		if err := <-held; err != nil {
			t.Errorf("rank %d: holding run: %v", rank, err)
		}
	}
	busyMsgs, busyGatherErr := hataori.Gather(ctx, comm, 0, errText(busyErr))

	// Checks, after every collective call.
	if busyGatherErr != nil {
		t.Fatalf("rank %d: gather busy messages: %v", rank, busyGatherErr)
	}
	// The cause survives on every rank, not only on the busy one.
	if !errors.As(busyErr, &pe) || pe.Kind != hataori.KindPreflight || pe.Rank != size-1 ||
		!errors.Is(busyErr, lanes.ErrBusy) || !errors.Is(busyErr, hataori.KindPreflight) {
		t.Errorf("rank %d: busy lanes on rank %d gave %v, want its preflight error matching lanes.ErrBusy", rank, size-1, busyErr)
	}
	if pmapErr != nil || gatherErr != nil || msgErr != nil || againErr != nil {
		t.Fatalf("rank %d: pmap %v, gather %v, gather messages %v, second pmap %v", rank, pmapErr, gatherErr, msgErr, againErr)
	}
	threads.check(t, coordinator) // in one call, each engine on its lane's thread, not the coordinator's
	// Key is ((index*3 + class)*size + reporting rank), class 1 for a
	// callback error.
	if !errors.As(userErr, &pe) || pe.Kind != hataori.KindUser || !errors.Is(userErr, hataori.KindUser) ||
		pe.Key != (17*3+1)*int64(size)+int64(pe.Rank) {
		t.Errorf("rank %d: user error %v (%T), want a KindUser *PmapError for item 17", rank, userErr, userErr)
	} else if pe.Rank == rank && !errors.Is(userErr, errBad) {
		t.Errorf("rank %d: the reporting rank's error does not unwrap to the callback's: %v", rank, userErr)
	}
	if rank == 0 {
		if len(got) != n {
			t.Fatalf("root: %d results, want %d", len(got), n)
		}
		for i, x := range items {
			if got[i] != closedForm(x) {
				t.Errorf("root: result %d = %d, want %d", i, got[i], closedForm(x))
			}
		}
		if len(all) != size {
			t.Fatalf("root: gathered %d count vectors, want %d", len(all), size)
		}
		for i := range n {
			total := int32(0)
			for r := range all {
				total += all[r][i]
			}
			if total != 1 {
				t.Errorf("item %d evaluated %d times over %d ranks", i, total, size)
			}
		}
		for r := range size {
			if msgs[r] != msgs[0] || busyMsgs[r] != busyMsgs[0] {
				t.Errorf("rank %d returned %q and %q, rank 0 %q and %q", r, msgs[r], busyMsgs[r], msgs[0], busyMsgs[0])
			}
		}
		if len(again) != len(seq) {
			t.Fatalf("second call: %d results, want %d", len(again), len(seq))
		}
		for i, x := range seq {
			if again[i] != closedForm(x) {
				t.Errorf("second call: result %d = %d, want %d", i, again[i], closedForm(x))
			}
		}
	} else if got != nil || again != nil {
		t.Errorf("rank %d: non-root got results", rank)
	}
}

// errText is err's message, or "<nil>", for comparing errors across ranks.
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// firstDeal is the root's side of TestPmapLanesAtOnce's schedule, which
// gatedItem's encoder follows. Items are encoded only by the root's
// coordinator, for the other ranks' TASKs (the root's lanes take their
// batches directly): until open is closed it deals at most one batch to
// another rank while the root's own lanes take theirs, and it closes dealt
// once it has encoded the first want TASKs.
type firstDeal struct {
	open  chan struct{}
	want  int64
	sent  atomic.Int64
	dealt chan struct{}
	late  atomic.Bool // the coordinator gave up waiting for open (20 s)
}

// atOnceDeal is the root's firstDeal during its call (nil elsewhere).
var atOnceDeal atomic.Pointer[firstDeal]

// gatedItem is an int item whose encoding follows atOnceDeal.
type gatedItem int

func (g gatedItem) EncodeMsgpack(enc *msgpack.Encoder) error {
	if d := atOnceDeal.Load(); d != nil {
		select {
		case <-d.open:
		case <-time.After(20 * time.Second):
			d.late.Store(true)
		}
		if d.sent.Add(1) == d.want {
			close(d.dealt)
		}
	}
	return enc.EncodeInt(int64(g))
}

func (g *gatedItem) DecodeMsgpack(dec *msgpack.Decoder) error {
	v, err := dec.DecodeInt64()
	*g = gatedItem(v)
	return err
}

// TestPmapLanesAtOnce shows that every lane of every rank runs a batch at
// once: each callback waits until as many callbacks as lanes run at once
// on its rank (bounded), which a rank running one batch at a time would
// never reach. Every rank gets a batch per lane by events, not by timing:
// the root's coordinator sends no TASK before all of the root's lanes hold
// a batch, and the root's lanes go on only once it has sent a TASK to each
// lane of the other ranks (firstDeal), which the root deals them, one per
// logical slot, before it answers any later READY (rootLoop.firstDeal).
func TestPmapLanesAtOnce(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 2 * time.Minute})
		}
		return
	}
	rank, size := mpitest.Init(t)
	comm, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	const k = 3
	l, err := lanes.New(make([]int, k))
	if err != nil {
		t.Fatal(err)
	}
	var running, peak atomic.Int64
	reached := make(chan struct{})
	var once atomic.Bool
	items := hataori.None[[]gatedItem]()
	n := 8 * k * size
	var deal *firstDeal
	if rank == 0 {
		xs := make([]gatedItem, n)
		for i := range xs {
			xs[i] = gatedItem(i)
		}
		items = hataori.Some(xs)
		deal = &firstDeal{open: reached, want: int64(k * (size - 1)), dealt: make(chan struct{})}
		if deal.want == 0 {
			close(deal.dealt)
		}
		atOnceDeal.Store(deal)
		defer atOnceDeal.Store(nil)
	}
	out, err := lanes.PmapLanes(context.Background(), comm, l, hataori.Options{}, items, func(x gatedItem, _ int) (int, error) {
		c := running.Add(1)
		defer running.Add(-1)
		for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
		}
		if c >= k && once.CompareAndSwap(false, true) {
			close(reached)
		}
		select {
		case <-reached:
		case <-time.After(20 * time.Second):
			return 0, fmt.Errorf("rank %d: at most %d lanes ran at once, want %d", rank, peak.Load(), k)
		}
		if deal != nil {
			select {
			case <-deal.dealt:
			case <-time.After(20 * time.Second):
				return 0, fmt.Errorf("the root sent %d TASKs in 20 s, want %d before its lanes go on", deal.sent.Load(), deal.want)
			}
		}
		return int(x) + 1, nil
	})
	if err != nil {
		t.Fatalf("rank %d: %v", rank, err)
	}
	if deal != nil && deal.late.Load() {
		t.Errorf("the root's lanes never all held a batch: its coordinator gave up waiting")
	}
	for i, v := range out {
		if v != i+1 {
			t.Fatalf("out[%d] = %d", i, v)
		}
	}
}

// TestPmapLanesContext shows that PmapLanesContext hands every lane the
// call's context, cancelled on every rank when an item fails on one of
// them: the other callbacks, which would wait 30 s, return within a few
// seconds, and the error is the failing item's, not a cancelled one's.
func TestPmapLanesContext(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 2 * time.Minute})
		}
		return
	}
	rank, size := mpitest.Init(t)
	comm, err := hataori.World()
	if err != nil {
		t.Fatal(err)
	}
	l, err := lanes.New(make([]int, 2))
	if err != nil {
		t.Fatal(err)
	}
	items := hataori.None[[]int]()
	if rank == 0 {
		items = hataori.Some(make([]int, 8*size))
	}
	last := size - 1
	var failed atomic.Bool
	start := time.Now()
	_, err = lanes.PmapLanesContext(context.Background(), comm, l, hataori.Options{}, items, func(ctx context.Context, x, _ int) (int, error) {
		if rank == last && failed.CompareAndSwap(false, true) {
			time.Sleep(20 * time.Millisecond)
			return 0, fmt.Errorf("failed on rank %d", rank)
		}
		select {
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), hataori.ErrStopped) {
				return 0, fmt.Errorf("rank %d: cause %v, want ErrStopped", rank, context.Cause(ctx))
			}
			return 0, ctx.Err()
		case <-time.After(30 * time.Second):
			return x, nil
		}
	})
	var pe *hataori.PmapError
	if !errors.As(err, &pe) || pe.Kind != hataori.KindUser || pe.Rank != last || pe.Message != fmt.Sprintf("failed on rank %d", last) {
		t.Errorf("rank %d: %v, want rank %d's failure", rank, err, last)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("rank %d: the call took %v", rank, el)
	}
}
