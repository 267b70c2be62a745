//go:build mpirt || mpicgo

package main

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sharedCounter is the bound of the mixed case for any dealing on one
// node: the ranks take items one at a time from a counter in shared
// memory, with no message, no coordinator and no batch, so what is left of
// the call is the items and the cores' time-sharing. Each item's wall and
// thread CPU time go into the shared page for the root to read.
type sharedCounter struct {
	mem        []byte
	next, done *atomic.Int64
	wall, cpu  []atomic.Int64 // per item, nanoseconds
}

// counterDir is where the shared file lives: tmpfs where there is one.
func counterDir() string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		return "/dev/shm"
	}
	return os.TempDir()
}

// openCounter maps a shared counter for n items on every rank (a
// collective: every rank of the job must be on the root's host). The file
// is removed once every rank has mapped it; close unmaps it.
func (e *env) openCounter(n int) (*sharedCounter, error) {
	size := 16 + 16*n
	pid, err := e.bcastUint64(uint64(os.Getpid()))
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("%s/benchpmap-counter-%d", counterDir(), pid)
	if e.rank == 0 {
		if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
			return nil, err
		}
	}
	if err := e.world.Barrier(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	f.Close()
	if err != nil {
		return nil, err
	}
	if err := e.world.Barrier(); err != nil {
		return nil, err
	}
	if e.rank == 0 {
		os.Remove(path)
	}
	words := unsafe.Slice((*atomic.Int64)(unsafe.Pointer(&mem[0])), size/8)
	return &sharedCounter{mem: mem, next: &words[0], done: &words[1], wall: words[2 : 2+n], cpu: words[2+n : 2+2*n]}, nil
}

func (c *sharedCounter) close() { unix.Munmap(c.mem) }

// counterSink keeps the items' results of sharedCounter.run alive.
var counterSink atomic.Uint64

// run deals the items of ks through the counter on every rank and returns,
// on the root, the time from its start to the moment it saw every rank
// done (within 100 µs), and every item's wall and CPU time. A rank that
// runs out of items sleeps, polling the shared page, rather than entering
// an MPI call that could spin on a core others still compute on.
func (c *sharedCounter) run(e *env, ks []int) (time.Duration, []time.Duration, []time.Duration, error) {
	if e.rank == 0 {
		c.next.Store(0)
		c.done.Store(0)
	}
	if err := e.world.Barrier(); err != nil {
		return 0, nil, nil, err
	}
	start := time.Now()
	runtime.LockOSThread()
	var h uint64
	for {
		i := int(c.next.Add(1) - 1)
		if i >= len(ks) {
			break
		}
		t0, c0 := time.Now(), threadCPU()
		h ^= spin(ks[i], uint64(i))
		c.cpu[i].Store(int64(threadCPU() - c0))
		c.wall[i].Store(int64(time.Since(t0)))
	}
	runtime.UnlockOSThread()
	counterSink.Add(h)
	c.done.Add(1)
	for c.done.Load() < int64(e.size) {
		time.Sleep(100 * time.Microsecond)
	}
	t := time.Since(start)
	if err := e.world.Barrier(); err != nil { // every rank has seen the count
		return 0, nil, nil, err
	}
	wall, cpu := make([]time.Duration, len(ks)), make([]time.Duration, len(ks))
	for i := range ks {
		wall[i], cpu[i] = time.Duration(c.wall[i].Load()), time.Duration(c.cpu[i].Load())
	}
	return t, wall, cpu, nil
}
