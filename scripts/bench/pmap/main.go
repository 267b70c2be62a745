//go:build mpirt || mpicgo

// Command benchpmap measures hataori.Pmap under mpirun and prints, from
// rank 0, each figure next to a baseline measured in the same run, with
// the items and batch sizes every rank and slot ran (Options.Stats:
// CallStats.Items, Sizes, Busy, Idle), and every rank's allowed CPUs and
// GOMAXPROCS (before and during the call). Each case runs the
// configurations a user writes from the README, with a zero Options{}
// (automatic batch sizes, Mode Auto): MPI-only (nil domain), hybrid
// (hataori.NewLocalDomain on every rank, the zero Mode) and, for cpu and
// fine, lanes (lanes.New with one engine per allowed CPU,
// lanes.PmapLanes); cpu, fine, skew and mixed also run the other batch
// sizes of -batches (default 1) for comparison, interleaved.
//
//	cpu       20,000 CPU-bound items of ~20 µs (a deterministic arithmetic
//	          loop calibrated once per run on rank 0, the same work on every
//	          rank): efficiency = items × serial cost per item ÷ cores used
//	          ÷ Pmap wall time, the serial cost measured by a plain loop on
//	          every rank right before and after each call
//	fine      the same with 100,000 items of ~2 µs
//	skew      64 heavy-tailed sleep items: makespan against a zero-overhead
//	          greedy schedule of the durations the items really slept, in
//	          the same order, on as many machines as the call had slots; the
//	          ideal bound; a static contiguous split executed for real
//	mixed     ~3,700 heavy-tailed CPU items of 10 µs to 10 ms (2 s in all),
//	          shuffled: makespan against the greedy schedule of the
//	          durations each item measured in its callback, on the call's
//	          slots (wall times), or on the node's CPUs where the slots
//	          outnumber them (the items' thread CPU times); and against
//	          the same items dealt by a counter in shared memory
//	trivial   200,000 trivial items: µs/item, hybrid and MPI-only, next to
//	          the MPI ping-pong round trip and a plain loop
//	overhead  20,000 trivial items, automatic sizes, batch 1 and 64: µs/item
//	          next to the MPI ping-pong round trip between ranks 0 and 1
//	payload   1 MiB []float64 results (the root's own slots held back so
//	          results cross ranks): per-result time and bandwidth of the
//	          whole call and of the remote rank against raw MPI doing the
//	          same work (rank 1 computes a fresh result and sends it, rank 0
//	          receives it into a fresh slice and keeps it), round by round;
//	          the transport ceiling (one buffer reused) for context
//	remote    64 items of ~300 µs returning 1 MiB []float64 on 2 ranks
//	          (nothing held back): the remote rank's result path (time per
//	          result minus callback time) as a bandwidth, for
//	          scripts/bench-pmap.sh to set against the C ping-pong
//
// Run it through scripts/bench-pmap.sh.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

func init() { runtime.LockOSThread() }

// env is one rank's benchmark context.
type env struct {
	world      hataori.Comm
	rank, size int
}

func main() {
	which := flag.String("case", "all", "cpu, fine, skew, mixed, trivial, overhead, payload, remote, prefetch, hooks, start or all")
	flag.StringVar(&only, "configs", "", "comma-separated configurations of the cpu case to run (mpi-only, hybrid, lanes; static, run only when named: every rank its contiguous share in a plain loop, then a Gather, the bound of any dealing); empty: mpi-only, hybrid and lanes")
	batches := flag.String("batches", "0,1", "cpu, fine, skew, mixed: comma-separated Options.BatchSize values to run, interleaved (0: automatic, the zero Options: the figure; the others for comparison)")
	flag.BoolVar(&cpuPrefetch, "prefetch", false, "cpu case: Options.Prefetch (off by default, as in the issue's figures)")
	flag.BoolVar(&threads, "threads", false, "cpu and mixed cases: print every rank's busy threads during each call (CPU time, run-queue wait, times scheduled in; from /proc/self/task/*/schedstat)")
	flag.IntVar(&rounds, "rounds", 5, "measured rounds per configuration (cpu, skew, overhead, hooks); the median is reported")
	flag.IntVar(&hooksItems, "hooks-items", hooksItems, "items per call of the hooks case")
	flag.Parse()
	cpuBatches = nil
	for _, f := range strings.Split(*batches, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || b < 0 {
			fail(fmt.Errorf("-batches: %q is not a batch size", f))
		}
		cpuBatches = append(cpuBatches, b)
	}
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		fail(err)
	}
	defer hataori.Finalize()
	world, err := hataori.World()
	if err != nil {
		fail(err)
	}
	e := &env{world: world}
	if e.rank, err = world.Rank(); err != nil {
		fail(err)
	}
	if e.size, err = world.Size(); err != nil {
		fail(err)
	}
	cases := map[string]func(*env) error{
		"cpu":      func(e *env) error { return cpuBound(e, cpuWork20) },
		"fine":     func(e *env) error { return cpuBound(e, cpuWork2) },
		"skew":     skew,
		"mixed":    mixed,
		"trivial":  trivial,
		"overhead": overhead,
		"payload":  payload,
		"remote":   remote,
		"prefetch": prefetchGate,
		"hooks":    hooks,
		"start":    start,
	}
	if _, ok := cases[*which]; !ok && *which != "all" {
		fail(fmt.Errorf("unknown case %q", *which))
	}
	for _, name := range []string{"cpu", "fine", "skew", "mixed", "trivial", "overhead", "payload", "remote", "prefetch", "hooks", "start"} {
		if *which != "all" && *which != name {
			continue
		}
		if err := cases[name](e); err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
	}
}

// printf prints on rank 0 only.
func (e *env) printf(format string, args ...any) {
	if e.rank == 0 {
		fmt.Printf(format, args...)
	}
}

// items returns 0..n-1 on rank 0 and None elsewhere.
func (e *env) items(n int) hataori.Maybe[[]int] {
	if e.rank != 0 {
		return hataori.None[[]int]()
	}
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return hataori.Some(xs)
}

var ctx = context.Background()

// rounds is the number of measured rounds of each configuration.
var rounds = 5

// cpuBatches are the batch sizes the cpu, fine, skew and mixed cases run
// (0: automatic, the zero Options).
var cpuBatches = []int{0, 1}

// cpuPrefetch is the cpu case's Options.Prefetch.
var cpuPrefetch bool

// threads asks the cpu case for per-thread scheduler statistics.
var threads bool

// only restricts the cpu case to some configurations (empty: all).
var only string

// gather returns, on rank 0, every rank's s (rank order); nil elsewhere.
func (e *env) gather(s string) ([]string, error) {
	const tag = 9
	if e.rank != 0 {
		return nil, e.world.Send([]byte(s), 0, tag)
	}
	out := []string{s}
	buf := make([]byte, 1<<16)
	for r := 1; r < e.size; r++ {
		n, err := e.world.Recv(buf, r, tag)
		if err != nil {
			return nil, err
		}
		out = append(out, string(buf[:n]))
	}
	return out, nil
}

// bcastUint64 returns rank 0's v on every rank.
func (e *env) bcastUint64(v uint64) (uint64, error) {
	const tag = 10
	var buf [8]byte
	if e.rank == 0 {
		binary.LittleEndian.PutUint64(buf[:], v)
		for r := 1; r < e.size; r++ {
			if err := e.world.Send(buf[:], r, tag); err != nil {
				return 0, err
			}
		}
		return v, nil
	}
	if _, err := e.world.Recv(buf[:], 0, tag); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(buf[:]), nil
}

// rankInfo is one line per rank: its allowed CPUs and GOMAXPROCS now (the
// launcher's binding), and, when during > 0, GOMAXPROCS as a callback saw
// it during the last call (Pmap raises it to the computing goroutines + 1).
// openDomain makes this rank's NewLocalDomain (the README's hybrid
// configuration) and prints header, then one line per rank: its allowed
// CPUs, GOMAXPROCS and its domain's workers.
func (e *env) openDomain(header string) (*hataori.Domain, error) {
	d, err := hataori.NewLocalDomain()
	if err != nil {
		return nil, err
	}
	info, err := e.gather(fmt.Sprintf("rank %d: allowed CPUs %v, GOMAXPROCS %d; NewLocalDomain: %d workers", e.rank, allowedCPUs(), runtime.GOMAXPROCS(0), d.Workers()))
	if err != nil {
		d.Close()
		return nil, err
	}
	e.printf("%s\n", header)
	for _, s := range info {
		e.printf("  %s\n", s)
	}
	return d, nil
}

func (e *env) rankInfo(during int64) ([]string, error) {
	s := fmt.Sprintf("rank %d: allowed CPUs %v, GOMAXPROCS %d", e.rank, allowedCPUs(), runtime.GOMAXPROCS(0))
	if during > 0 {
		s += fmt.Sprintf(" (%d during the call)", during)
	}
	return e.gather(s)
}

// unionCPUs returns, on rank 0, the number of distinct CPUs some rank may
// run on.
func (e *env) unionCPUs() (int, error) {
	all, err := e.gather(fmt.Sprint(allowedCPUs()))
	if err != nil || e.rank != 0 {
		return 0, err
	}
	seen := map[string]bool{}
	for _, s := range all {
		for _, c := range strings.Fields(strings.Trim(s, "[]")) {
			seen[c] = true
		}
	}
	return len(seen), nil
}

// slotsOf formats a CallStats table: per rank, the items of each slot.
func slotsOf(t [][]int64) string {
	var b strings.Builder
	for r, row := range t {
		if r > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "r%d%v", r, row)
	}
	return b.String()
}

// sizesOf prints CallStats.Sizes: per rank, per slot, the batches'
// smallest/median/largest item count and their number.
func sizesOf(t [][]hataori.BatchSizes) string {
	var b strings.Builder
	for r, row := range t {
		if r > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "r%d[", r)
		for s, z := range row {
			if s > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%d/%d/%d×%d", z.Min, z.Median, z.Max, z.Batches)
		}
		b.WriteByte(']')
	}
	return b.String()
}

// rankSizes summarises CallStats.Sizes per rank: the smallest and largest
// batch of any of its slots, the median of its slots' medians weighted by
// their batches (the exact median when the rank has one slot), and its
// batches, as r0 min/median/max×batches.
func rankSizes(t [][]hataori.BatchSizes) string {
	var b strings.Builder
	for r, row := range t {
		if r > 0 {
			b.WriteByte(' ')
		}
		var n int64
		lo, hi := 0, 0
		type med struct {
			m int
			w int64
		}
		var ms []med
		for _, z := range row {
			if z.Batches == 0 {
				continue
			}
			if n == 0 || z.Min < lo {
				lo = z.Min
			}
			hi = max(hi, z.Max)
			n += z.Batches
			ms = append(ms, med{z.Median, z.Batches})
		}
		slices.SortFunc(ms, func(a, b med) int { return a.m - b.m })
		m, acc := 0, int64(0)
		for _, x := range ms {
			acc += x.w
			if 2*acc >= n {
				m = x.m
				break
			}
		}
		fmt.Fprintf(&b, "r%d %d/%d/%d×%d", r, lo, m, hi, n)
	}
	return b.String()
}

// busyIdleOf formats CallStats.Busy and Idle: per rank, each slot's busy
// and idle milliseconds.
func busyIdleOf(st hataori.CallStats) string {
	var b strings.Builder
	for r, row := range st.Busy {
		if r > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "r%d[", r)
		for s, busy := range row {
			if s > 0 {
				b.WriteByte(' ')
			}
			var idle time.Duration
			if r < len(st.Idle) && s < len(st.Idle[r]) {
				idle = st.Idle[r][s]
			}
			fmt.Fprintf(&b, "%.0f/%.0f", ms(busy), ms(idle))
		}
		b.WriteString("]ms")
	}
	return b.String()
}

// totalSlots is the number of slots of a call (every rank's).
func totalSlots(st hataori.CallStats) int {
	n := 0
	for _, row := range st.Items {
		n += len(row)
	}
	return n
}

// rankTotals is the items each rank ran.
func rankTotals(st hataori.CallStats) []int64 {
	out := make([]int64, len(st.Items))
	for r, row := range st.Items {
		for _, v := range row {
			out[r] += v
		}
	}
	return out
}

// gomaxprocsSeen records GOMAXPROCS once per call, from a callback.
type gomaxprocsSeen struct{ v atomic.Int64 }

func (g *gomaxprocsSeen) note() {
	if g.v.Load() == 0 {
		g.v.Store(int64(runtime.GOMAXPROCS(0)))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchpmap:", err)
	os.Exit(1)
}

// callMeter is what a call costs its rank's threads: meterCall before the
// call, env.metered after it.
type callMeter struct {
	cpu   time.Duration    // the process's CPU time before
	sched map[int][3]int64 // with -threads: every thread's counters before
}

func meterCall() callMeter {
	m := callMeter{cpu: processCPU()}
	if threads {
		m.sched = threadSched()
	}
	return m
}

// metered returns, on rank 0, every rank's process CPU time during the
// call less its less (0, or the items' own CPU time) and, with -threads,
// every rank's thread report over wall (a collective; nil elsewhere).
func (e *env) metered(m callMeter, wall, less time.Duration) ([]time.Duration, []string, error) {
	all, err := e.gather(strconv.FormatInt(int64(processCPU()-m.cpu-less), 10))
	if err != nil {
		return nil, nil, err
	}
	var report []string
	if threads {
		if report, err = e.gather(threadReport(m.sched, wall)); err != nil {
			return nil, nil, err
		}
	}
	var cpu []time.Duration
	for _, s := range all {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, nil, err
		}
		cpu = append(cpu, time.Duration(n))
	}
	return cpu, report, nil
}

// roundAll rounds every duration of ds to a multiple of m.
func roundAll(ds []time.Duration, m time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(m)
	}
	return out
}
