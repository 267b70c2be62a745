//go:build mpirt || mpicgo

package hataori

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/mpitest"
)

// bigFramesCaseEnv names the case of TestPmapLargeFramesCross a job runs
// (one of bigFramesCases); unset, a rank runs them all.
const bigFramesCaseEnv = "HATAORI_TEST_BIGFRAMES_CASE"

// bigFrameBytes is the size of a large item or result: three times the
// eager limit of Open MPI's shared memory transport (4 KiB; MPICH's is
// similar), so that one of them alone makes a frame that MPI_Send cannot
// buffer.
const bigFrameBytes = 12 << 10

// bigFramesCases are the cases of TestPmapLargeFramesCross, each run as
// its own job (so a hang in one does not hide the verdict of another).
var bigFramesCases = []string{"big-auto", "big-prefetch-b1", "small-items-big-results"}

// TestPmapLargeFramesCross checks that a call completes, every result
// correct and in order on the root, when the root's coordinator sends a
// TASK while a remote rank's coordinator sends a RESULT and both frames
// exceed the MPI's eager limit: a remote rank with more than one logical
// slot outstanding (a prefetch slot, automatic with a zero Options or
// forced with Prefetch, or the two executor slots of a hybrid rank) gets
// its next TASK while it returns a RESULT. Two blocking MPI_Sends of
// frames too large to buffer each wait for the other side's receive,
// which a coordinator blocked in its own send never posts: the job hangs
// until the harness's timeout fails it. Cases, MPI-only and hybrid (a
// domain of 2 workers):
//
//   - big-auto: items and results of 12 KiB each ([]byte), a zero
//     Options (automatic sizes, automatic prefetch), 300 items;
//   - big-prefetch-b1: the same with Prefetch and BatchSize 1;
//   - small-items-big-results: int items (each above 2^32, so 9 bytes
//     encoded, 17 with its index in a TASK), results of 1 KiB, a zero
//     Options, 12000 items, so that the automatic batches grow and TASKs
//     of hundreds of items exceed the eager limit too (the configuration
//     of the hang first observed: rank 0 in rootLoop.onReady's send of a
//     5,664-byte TASK, rank 1 in remoteLoop.finish's send of a 4,400-byte
//     RESULT).
//
// Every rank runs some items (the first deal gives every logical slot a
// batch; the root's CallStats show it). Under hataoridebug the root also
// traces the largest TASK and RESULT it moved: above the eager limit by
// construction where an item or a result alone is; in the third case the
// root's callbacks wait until a RESULT above it has arrived (bigResultIn),
// so that its own slots cannot take the items the remote batches grow on
// (the TASK size there depends on the automatic sizes, so it is only
// logged).
func TestPmapLargeFramesCross(t *testing.T) {
	if !mpitest.Child() {
		for _, c := range bigFramesCases {
			t.Run(c, func(t *testing.T) {
				for _, n := range []int{2, 4} {
					mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: 45 * time.Second,
						Env: []string{bigFramesCaseEnv + "=" + c}})
				}
			})
		}
		return
	}
	e := newRankEnv(t)
	if e.size < 2 {
		t.Fatalf("needs at least 2 ranks, got %d", e.size)
	}
	want := os.Getenv(bigFramesCaseEnv)
	for _, c := range bigFramesCases {
		if want != "" && c != want {
			continue
		}
		for _, m := range []execMode{{"mpi-only", nil, Auto}, {"hybrid", e.dom, Auto}} {
			what := c + " " + m.name
			if e.rank == 0 {
				t.Logf("%s: start", what)
			}
			start := time.Now()
			switch c {
			case "big-auto":
				e.bigFramesBytes(what, m, Options{}, 300)
			case "big-prefetch-b1":
				e.bigFramesBytes(what, m, Options{Prefetch: true, BatchSize: 1}, 300)
			case "small-items-big-results":
				e.bigFramesInts(what, m, 12000)
			}
			if e.rank == 0 {
				t.Logf("%s: done in %v", what, time.Since(start).Round(time.Millisecond))
			}
		}
	}
}

// bigItem is item i of the large-item cases: bigFrameBytes bytes derived
// from i.
func bigItem(i int) []byte {
	b := make([]byte, bigFrameBytes)
	for j := range b {
		b[j] = byte(i*131 + j*7 + j>>8)
	}
	binary.LittleEndian.PutUint64(b, uint64(i))
	return b
}

// bigTransform is the callback of the large-item cases: a transformed
// copy of x, as large.
func bigTransform(x []byte) []byte {
	y := make([]byte, len(x))
	for j, v := range x {
		y[len(x)-1-j] = v ^ 0xa5
	}
	return y
}

// smallItemsResultBytes is the size of a result in the small-items case:
// 1 KiB, so that a RESULT exceeds the eager limit from a batch of five
// results on, and a RESULT whose batch made a TASK above it (hundreds of
// items) is hundreds of KiB. Larger results only add bytes to move: with
// 12 KiB results the case moved 147 MB per call, 20-30 s under -race with
// four MPICH ranks on 2 cores beside another job, against its 40 s bound.
const smallItemsResultBytes = 1 << 10

// bigResultBase is the bulk of bigResult, shared so that the callbacks
// stay cheap (a copy, not a loop).
var bigResultBase = bigItem(-1)[:smallItemsResultBytes]

// bigIntBase is added to the index of an int item of the small-items
// case: items above 2^32 encode to 9 bytes, which makes TASKs larger for
// the same automatic batch size.
const bigIntBase = 1 << 40

// bigResult is the result of int item i in the small-items case:
// smallItemsResultBytes bytes, i stamped at both ends.
func bigResult(i int) []byte {
	b := bytes.Clone(bigResultBase)
	binary.LittleEndian.PutUint64(b, uint64(i))
	binary.LittleEndian.PutUint64(b[len(b)-8:], ^uint64(i))
	return b
}

// bigFramesBytes runs n items of bigItem through bigTransform with opts
// on executor m and checks the call (checkBigFrames).
func (e *rankEnv) bigFramesBytes(what string, m execMode, opts Options, n int) {
	var items Maybe[[][]byte]
	if e.rank == 0 {
		xs := make([][]byte, n)
		for i := range xs {
			xs[i] = bigItem(i)
		}
		items = Some(xs)
	}
	var st CallStats
	opts.Mode, opts.Stats = m.mode, &st
	var out [][]byte
	var err error
	fed := e.remotesFed()
	tr := e.traceFrames(func(*frameTrace) {
		out, err = Pmap(context.Background(), e.world, m.d, opts, items, func(x []byte) ([]byte, error) {
			fed()
			return bigTransform(x), nil
		})
	})
	e.checkBigFrames(what, err, out, n, func(i int) []byte { return bigTransform(bigItem(i)) }, &st, tr, true)
}

// bigFramesInts runs n int items (index + bigIntBase) through bigResult
// with a zero Options on executor m and checks the call (checkBigFrames).
func (e *rankEnv) bigFramesInts(what string, m execMode, n int) {
	var items Maybe[[]int]
	if e.rank == 0 {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = bigIntBase + i
		}
		items = Some(xs)
	}
	var st CallStats
	var out [][]byte
	var err error
	fed := e.remotesFed()
	fs := e.traceFrames(func(tr *frameTrace) {
		big := e.bigResultIn(tr)
		out, err = Pmap(context.Background(), e.world, m.d, Options{Mode: m.mode, Stats: &st}, items, func(x int) ([]byte, error) {
			fed()
			big()
			return bigResult(x - bigIntBase), nil
		})
	})
	e.checkBigFrames(what, err, out, n, bigResult, &st, fs, false)
}

// remotesFed returns what the callbacks of one call run first: on the root
// (under hataoridebug, which counts the root's TASKs) it waits, in the
// callbacks of the root's first batches, until the root has sent a TASK to
// every other rank, at most gateWait, so that the root's slots cannot run
// the whole input before the first deal has reached every rank (the root's
// slots start before it): every rank then runs items by that event, not
// by timing (checkBigFrames).
func (e *rankEnv) remotesFed() func() {
	if !traceOn || e.rank != 0 {
		return func() {}
	}
	base := debugTasksSent()
	return e.rootGate(func() bool { return debugTasksSent()-base >= int64(e.size-1) },
		func() string {
			return fmt.Sprintf("the root sent %d TASKs, want one per other rank", debugTasksSent()-base)
		})
}

// bigResultIn returns what the callbacks of a traced call run after
// remotesFed: on the root (under hataoridebug) it waits, at most gateWait,
// until the root has received a RESULT larger than bigFrameBytes, so that
// the root's own slots cannot run so much of the input that no remote
// batch grows to a RESULT above the eager limit (checkBigFrames' verdict
// then follows from that event, not from the speed of the root's slots).
func (e *rankEnv) bigResultIn(tr *frameTrace) func() {
	if !traceOn || e.rank != 0 {
		return func() {}
	}
	return e.rootGate(func() bool { return tr.result.Load() > bigFrameBytes },
		func() string {
			return fmt.Sprintf("the largest RESULT the root received was %d bytes, want one above %d", tr.result.Load(), bigFrameBytes)
		})
}

// rootGate returns a function that blocks until open reports true, once
// per call (later calls return at once), polling every 50 µs for gateWait
// at most; past that it fails the test with what() and returns.
func (e *rankEnv) rootGate(open func() bool, what func() string) func() {
	var done atomic.Bool
	return func() {
		if done.Load() {
			return
		}
		for end := time.Now().Add(gateWait); !open(); {
			if time.Now().After(end) {
				e.t.Errorf("after %v: %s", gateWait, what())
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		done.Store(true)
	}
}

// frameSizes is the largest TASK the root sent and the largest RESULT it
// received in a call, by the coordinator's trace (zero without the
// hataoridebug tag).
type frameSizes struct{ task, result int }

// frameTrace is frameSizes as a call goes on, for its callbacks to read.
type frameTrace struct{ task, result atomic.Int64 }

// traceFrames runs f and returns, on the root under hataoridebug, the
// largest TASK and RESULT payloads of the call f makes; f gets them as
// they grow.
func (e *rankEnv) traceFrames(f func(tr *frameTrace)) frameSizes {
	var tr frameTrace
	if !traceOn || e.rank != 0 {
		f(&tr)
		return frameSizes{}
	}
	raise := func(v *atomic.Int64, n int) {
		for old := v.Load(); int64(n) > old && !v.CompareAndSwap(old, int64(n)); old = v.Load() {
		}
	}
	pmapTrace = func(ev string) {
		var to, rank, slot, n int
		if _, err := fmt.Sscanf(ev, "send kind=TASK to=%d bytes=%d", &to, &n); err == nil {
			raise(&tr.task, n)
		} else if _, err := fmt.Sscanf(ev, "recv-result rank=%d slot=%d bytes=%d", &rank, &slot, &n); err == nil {
			raise(&tr.result, n)
		}
	}
	f(&tr)
	pmapTrace = nil
	return frameSizes{int(tr.task.Load()), int(tr.result.Load())}
}

// checkBigFrames checks one call of TestPmapLargeFramesCross: no error on
// any rank; on the root n results, result i equal to want(i), every rank
// with some items in st, and under hataoridebug a RESULT (and, when
// bigTasks, a TASK) larger than bigFrameBytes.
func (e *rankEnv) checkBigFrames(what string, err error, out [][]byte, n int, want func(int) []byte, st *CallStats, fs frameSizes, bigTasks bool) {
	t := e.t
	t.Helper()
	if err != nil {
		t.Fatalf("%s: rank %d: %v", what, e.rank, err)
	}
	if e.rank != 0 {
		if out != nil {
			t.Errorf("%s: rank %d got %d results", what, e.rank, len(out))
		}
		return
	}
	if len(out) != n {
		t.Fatalf("%s: root got %d results, want %d", what, len(out), n)
	}
	for i, v := range out {
		if !bytes.Equal(v, want(i)) {
			t.Fatalf("%s: result %d is wrong (%d bytes)", what, i, len(v))
		}
	}
	if len(st.Items) != e.size {
		t.Fatalf("%s: CallStats for %d ranks, want %d", what, len(st.Items), e.size)
	}
	per := make([]int64, e.size)
	var total int64
	for r, slots := range st.Items {
		for _, k := range slots {
			per[r] += k
		}
		total += per[r]
	}
	if total != int64(n) {
		t.Errorf("%s: CallStats count %d items, want %d: %v", what, total, n, per)
	}
	for r, k := range per {
		if k == 0 && traceOn { // by remotesFed's wait, which needs the TASK count
			t.Errorf("%s: rank %d ran no item: %v", what, r, per)
		}
	}
	t.Logf("%s: items per rank %v, largest TASK %d bytes, largest RESULT %d bytes (traced: %v)", what, per, fs.task, fs.result, traceOn)
	if traceOn && (fs.result <= bigFrameBytes || (bigTasks && fs.task <= bigFrameBytes)) {
		t.Errorf("%s: largest TASK %d bytes, largest RESULT %d bytes: want both above %d (the TASK only where items are that large)",
			what, fs.task, fs.result, bigFrameBytes)
	}
}
