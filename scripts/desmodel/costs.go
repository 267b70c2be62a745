package main

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// Costs are the modelled per-message and per-item costs. Every field is a
// duration of the modelled clock; none is measured by the model itself.
// The defaults (DefaultCosts) and where each comes from are listed there.
type Costs struct {
	// Recv is the coordinator's cost to notice and receive one message
	// (Iprobe, receive, frame parse), on the root and on a remote rank.
	Recv time.Duration
	// Send is the coordinator's cost to build and send one message (TASK,
	// STOP, RESULT, READY, DRAIN), items excluded.
	Send time.Duration
	// Enc and Dec are the per-item costs of encoding and decoding an item
	// or result (msgpack) on whichever goroutine handles the frame.
	Enc, Dec time.Duration
	// Lock is how long one scheduler transition holds the root's lock
	// (the coordinator's decision, or a root slot's CompleteRoot +
	// RootDispatch); root slots and the coordinator queue for it.
	Lock time.Duration
	// Hop is the one-way network latency of a message between two ranks.
	Hop time.Duration
	// Handoff is the latency of a hand-off between a remote rank's
	// coordinator and one of its slot goroutines (each way); it delays
	// the batch but occupies neither.
	Handoff time.Duration
}

// DefaultCosts are the figures measured on this machine (docs/PERFORMANCE.md):
//
//   - Recv = Send = 2 µs: the event timeline of a 2-rank batch-1 call
//     ("What bounds two ranks on one core each") shows 6 µs on the root for
//     RESULT, READY and TASK, three messages: 2 µs each.
//   - Enc = Dec = 35 ns: BenchmarkItemCodec in this package (msgpack of
//     one float64 item into a reused buffer and decoded back: 56–76 ns
//     for the pair over 3 runs here), half of 70 ns each. Items and
//     results that cross ranks are encoded by the root's coordinator.
//   - Lock = 0.1 µs: trivial items, MPI-only, batch 1, MPICH: 0.11 µs per
//     item for everything the root's slot does per batch (section "Pmap:
//     trivial items"); the lock's share of it is at most that.
//   - Hop = 0.5 µs: half of the 8-byte round trip of the C ping-pong
//     (0.95–0.99 µs, section "MPI transport"): shared memory on one host.
//   - Handoff = 5 µs: the same event timeline: 5 µs to hand the TASK to the
//     slot, 5 µs for the slot's RESULT to wake the coordinator (one core
//     shared by the rank's coordinator and slot).
func DefaultCosts() Costs {
	return Costs{
		Recv:    2 * time.Microsecond,
		Send:    2 * time.Microsecond,
		Enc:     35 * time.Nanosecond,
		Dec:     35 * time.Nanosecond,
		Lock:    100 * time.Nanosecond,
		Hop:     500 * time.Nanosecond,
		Handoff: 5 * time.Microsecond,
	}
}

// RootPerBatch is the coordinator's service time for one remote batch of
// n items: RESULT (receive, decode n results, one transition), READY
// (receive, one transition) and TASK (send, encode n items), without
// waiting for the lock.
func (c Costs) RootPerBatch(n int) time.Duration {
	return 2*c.Recv + c.Send + 2*c.Lock + time.Duration(n)*(c.Enc+c.Dec)
}

// Dist is an item cost distribution: Cost(i) is item i's computing time,
// the same for every policy, so that runs differ only in the schedule.
type Dist struct {
	Name string
	Mean time.Duration
	// sigma > 0 makes the costs lognormal with that shape and mean Mean;
	// zero makes every item cost Mean.
	sigma float64
}

// The modelled distributions: fixed 2 µs and 20 µs, and a heavy-tailed
// lognormal (sigma 1.5, mean 20 µs: median 6.5 µs, 1 in 1000 items above
// 0.67 ms).
var (
	Fixed2   = Dist{Name: "fixed 2µs", Mean: 2 * time.Microsecond}
	Fixed20  = Dist{Name: "fixed 20µs", Mean: 20 * time.Microsecond}
	Heavy20  = Dist{Name: "lognormal 20µs", Mean: 20 * time.Microsecond, sigma: 1.5}
	AllDists = []Dist{Fixed2, Fixed20, Heavy20}
)

// period is the length of the cycle of heavy-tailed costs: item i costs
// what item i mod period does (8 MiB of prefix sums, computed once).
const period = 1 << 20

// heavy holds the prefix sums of one period of each lognormal shape.
var (
	heavyMu  sync.Mutex
	heavyTab = map[Dist][]time.Duration{}
)

// prefix returns d's prefix sums over one period: p[k] is the cost of
// items 0..k-1.
func (d Dist) prefix() []time.Duration {
	heavyMu.Lock()
	defer heavyMu.Unlock()
	if p, ok := heavyTab[d]; ok {
		return p
	}
	p := make([]time.Duration, period+1)
	for i := range period {
		p[i+1] = p[i] + d.draw(i)
	}
	heavyTab[d] = p
	return p
}

// draw is item i's lognormal cost: a normal deviate from two hashed
// uniforms (Box–Muller), shape sigma, mean Mean.
func (d Dist) draw(i int) time.Duration {
	u1 := unit(uint64(i)*2 + 1)
	u2 := unit(uint64(i)*2 + 2)
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	mu := math.Log(float64(d.Mean)) - d.sigma*d.sigma/2
	return time.Duration(math.Exp(mu + d.sigma*z))
}

// Cost returns item i's cost (deterministic in i).
func (d Dist) Cost(i int) time.Duration { return d.Work(i, 1) }

// Work returns the total cost of items [start, start+n), in O(1).
func (d Dist) Work(start, n int) time.Duration {
	if d.sigma == 0 {
		return time.Duration(n) * d.Mean
	}
	p := d.prefix()
	// Whole periods, then the rest, which may wrap once.
	w := time.Duration(n/period) * p[period]
	a := start % period
	b := a + n%period
	if b <= period {
		return w + p[b] - p[a]
	}
	return w + p[period] - p[a] + p[b-period]
}

// unit maps x to (0, 1) through splitmix64.
func unit(x uint64) float64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return (float64(x>>11) + 0.5) / (1 << 53)
}

func (d Dist) String() string { return d.Name }

func us(d time.Duration) string { return fmt.Sprintf("%.2fµs", float64(d)/1e3) }
