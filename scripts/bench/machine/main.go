//go:build linux

// Command machine measures two costs of this machine that bound Pmap's
// figures here (see scripts/bench-machine.sh, docs/PERFORMANCE.md and
// docs/ARCHITECTURE.md, "Waiting on a shared core").
//
// Wake-ups: on one CPU shared by two threads (the case of a rank that Open
// MPI binds to one core), what it costs a computing thread when another
// thread on the same CPU wakes up.
//
// A computing goroutine runs a fixed arithmetic chunk (about -chunk µs) in a
// loop; its throughput alone is the baseline, measured right before each
// case (interleaved, -rounds times, medians). Each case adds one partner on
// the same CPU and reports the chunks lost per partner wake-up, in µs:
//
//	timer    a locked goroutine that sleeps 10 µs in raw nanosleep (1 µs
//	         timer slack), as a Pmap coordinator backing off does
//	futex    a locked goroutine that waits in raw FUTEX_WAIT and that the
//	         computer wakes with FUTEX_WAKE after every chunk
//	channel  a locked goroutine that the computer (locked too) wakes after
//	         every chunk through a Go channel and that answers through
//	         another: a round trip, two hand-offs through the Go scheduler
//	         between locked goroutines
//
// Memory: writing -mib MiB of fresh anonymous memory (first touch: a page
// fault per 4 KiB page) and writing it again (second touch), in µs per
// MiB: every remote result of a Pmap is received into fresh memory that
// the caller keeps.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hataori/hataori-go/scripts/bench/internal/stats"
)

var sink atomic.Uint64

// spin runs n rounds of arithmetic the compiler cannot remove.
func spin(n int) {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink.Add(x)
}

// run computes chunks for d with partner (if any) started beside it and
// returns chunks per second and partner wake-ups.
func run(k int, d time.Duration, partner func(stop *atomic.Bool, afterChunk chan struct{}) *atomic.Int64, notify func()) (float64, int64) {
	var stop atomic.Bool
	var wakes *atomic.Int64
	if partner != nil {
		wakes = partner(&stop, nil)
	}
	n := 0
	t0 := time.Now()
	for time.Since(t0) < d {
		spin(k)
		n++
		if notify != nil {
			notify()
		}
	}
	el := time.Since(t0)
	stop.Store(true)
	if notify != nil {
		notify()
	}
	time.Sleep(5 * time.Millisecond)
	w := int64(0)
	if wakes != nil {
		w = wakes.Load()
	}
	return float64(n) / el.Seconds(), w
}

func main() {
	chunk := flag.Float64("chunk", 20, "µs per computing chunk (calibrated)")
	rounds := flag.Int("rounds", 5, "interleaved rounds (medians)")
	dur := flag.Duration("d", 300*time.Millisecond, "duration of each measurement")
	mib := flag.Int("mib", 64, "MiB of fresh memory to touch")
	flag.Parse()

	// One CPU for the whole process, two Ps: the computer and the partner
	// each hold one, as a Pmap call's slot and coordinator do.
	var set unix.CPUSet
	must(unix.SchedGetaffinity(0, &set))
	cpu := -1
	for i := 0; i < 1024 && cpu < 0; i++ {
		if set.IsSet(i) {
			cpu = i
		}
	}
	set.Zero()
	set.Set(cpu)
	runtime.LockOSThread()
	_ = unix.SchedSetaffinity(0, &set) // this thread; threads it creates inherit it
	runtime.GOMAXPROCS(2)
	pin := func() { runtime.LockOSThread(); _ = unix.SchedSetaffinity(0, &set) }

	// Calibrate the chunk.
	k := 1000
	for {
		t0 := time.Now()
		spin(k)
		if el := time.Since(t0); el > 200*time.Microsecond {
			k = int(float64(k) * *chunk / (float64(el) / 1e3))
			break
		}
		k *= 2
	}

	timer := func(stop *atomic.Bool, _ chan struct{}) *atomic.Int64 {
		var n atomic.Int64
		go func() {
			pin()
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
			ts := unix.NsecToTimespec(10_000)
			for !stop.Load() {
				_, _, _ = unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
				n.Add(1)
			}
		}()
		time.Sleep(time.Millisecond)
		return &n
	}
	var word atomic.Uint32
	futexWait := func(stop *atomic.Bool, _ chan struct{}) *atomic.Int64 {
		var n atomic.Int64
		go func() {
			pin()
			ts := unix.NsecToTimespec(int64(time.Millisecond))
			for !stop.Load() {
				if word.Swap(0) == 0 {
					_, _, _ = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), 0|128, 0, uintptr(unsafe.Pointer(&ts)), 0, 0)
					continue
				}
				n.Add(1)
			}
		}()
		time.Sleep(time.Millisecond)
		return &n
	}
	futexWake := func() {
		word.Store(1)
		_, _, _ = unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), 1|128, 1, 0, 0, 0)
	}
	ping, pong := make(chan struct{}), make(chan struct{})
	channel := func(stop *atomic.Bool, _ chan struct{}) *atomic.Int64 {
		var n atomic.Int64
		go func() {
			pin()
			for range ping {
				n.Add(1)
				pong <- struct{}{}
				if stop.Load() {
					return
				}
			}
		}()
		time.Sleep(time.Millisecond)
		return &n
	}
	chanNotify := func() { ping <- struct{}{}; <-pong }

	cases := []struct {
		name    string
		partner func(*atomic.Bool, chan struct{}) *atomic.Int64
		notify  func()
	}{
		{"timer", timer, nil},
		{"futex", futexWait, futexWake},
		{"channel", channel, chanNotify},
	}
	cost := make(map[string][]float64)
	for range *rounds {
		for _, c := range cases {
			base, _ := run(k, *dur, nil, nil)
			with, wakes := run(k, *dur, c.partner, c.notify)
			lostPerSec := 1 - with/base // fraction of the CPU lost
			if wakes > 0 {
				perWake := lostPerSec * dur.Seconds() / float64(wakes) * 1e6
				cost[c.name] = append(cost[c.name], perWake)
			}
		}
	}
	fmt.Printf("one CPU (%d), GOMAXPROCS 2, chunks of ~%.0f µs, %d interleaved rounds of %v:\n", cpu, *chunk, *rounds, *dur)
	for _, c := range cases {
		v := cost[c.name]
		if len(v) == 0 {
			fmt.Printf("  %-8s no wake-ups\n", c.name)
			continue
		}
		fmt.Printf("  %-8s %6.1f µs of the computing thread lost per wake-up (median; min %.1f, max %.1f)\n", c.name, stats.Median(v), slices.Min(v), slices.Max(v))
	}
	var first, second, huge []float64
	for range *rounds {
		f, s, err := touch(*mib, false)
		must(err)
		h, _, err := touch(*mib, true)
		must(err)
		first, second, huge = append(first, f), append(second, s), append(huge, h)
	}
	fmt.Printf("memory (%d MiB, %d rounds): first touch %.0f µs/MiB (with MADV_HUGEPAGE %.0f), second touch %.0f µs/MiB (medians)\n",
		*mib, *rounds, stats.Median(first), stats.Median(huge), stats.Median(second))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// touch copies into every byte of n MiB of fresh anonymous memory twice
// and returns the µs per MiB of each pass; with huge, the memory is 2 MiB
// aligned and advised MADV_HUGEPAGE first.
func touch(n int, huge bool) (first, second float64, err error) {
	m, err := unix.Mmap(-1, 0, n<<20+2<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = unix.Munmap(m) }()
	off := 0
	if a := uintptr(unsafe.Pointer(&m[0])) % (2 << 20); a != 0 {
		off = int(2<<20 - a)
	}
	b := m[off : off+n<<20]
	if huge {
		if err := unix.Madvise(b, unix.MADV_HUGEPAGE); err != nil {
			return 0, 0, err
		}
	}
	src := make([]byte, 1<<20)
	pass := func(v byte) float64 {
		for i := range src {
			src[i] = v
		}
		t0 := time.Now()
		for off := 0; off < len(b); off += len(src) {
			copy(b[off:], src) // as MPI copies a message into its buffer
		}
		return float64(time.Since(t0).Microseconds()) / float64(n)
	}
	first = pass(1)
	second = pass(2)
	return first, second, nil
}
