package hataori

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hataori/hataori-go/internal/sched"
)

// rootStore is where the root's items come from and its results go: the
// caller's slice and one result table (Pmap: sliceStore), or a stream's
// bounded window (PmapStream: streamStore). assigned, completed, failedItem
// and missing run under the scheduler lock; items and results are called
// by the batch's holder alone (a root slot, or the coordinator for a
// remote batch), outside it, between assigned and completed.
type rootStore[T, U any] interface {
	assigned(b sched.Batch)
	items(b sched.Batch) []T
	results(b sched.Batch) []U
	// completed: b's results are in (ok: the batch completes without
	// failing the call; the items it failed were named by failedItem).
	completed(b sched.Batch, ok bool)
	// failedItem: item i has no result (CollectAll lists it).
	failedItem(i int)
	// missing returns the items read that ended without a result and
	// that are not listed (CollectAll, a call that stopped early).
	missing(sch *sched.Scheduler, listed map[int]bool) []missingRange
	// total is the input's length, -1 while it is not known (Progress).
	total() int
	// awaitMore waits, under mu, until more items may be available, the
	// input has ended or the call has (after a dispatch said Wait).
	awaitMore()
	// hold: b's results (decoded by b's holder, outside the lock) alias
	// bufs, received from another rank; a stream with ReuseBuffers takes
	// them back once its sink has had b.
	hold(b sched.Batch, bufs [][]byte)
}

// sliceStore is Pmap's: the caller's items and the call's result table.
type sliceStore[T, U any] struct {
	in  []T
	out []U
}

func (s *sliceStore[T, U]) assigned(sched.Batch)        {}
func (s *sliceStore[T, U]) items(b sched.Batch) []T     { return s.in[b.Start:b.End()] }
func (s *sliceStore[T, U]) results(b sched.Batch) []U   { return s.out[b.Start:b.End()] }
func (s *sliceStore[T, U]) completed(sched.Batch, bool) {}
func (s *sliceStore[T, U]) failedItem(int)              {}
func (s *sliceStore[T, U]) total() int                  { return len(s.in) }
func (s *sliceStore[T, U]) awaitMore()                  {}
func (s *sliceStore[T, U]) hold(sched.Batch, [][]byte)  {}
func (s *sliceStore[T, U]) missing(sch *sched.Scheduler, listed map[int]bool) []missingRange {
	var out []missingRange
	lo := -1
	for i := 0; i <= len(s.in); i++ {
		miss := i < len(s.in) && !sch.IsDone(i) && !listed[i]
		switch {
		case miss && lo < 0:
			lo = i
		case !miss && lo >= 0:
			out = append(out, missingRange{lo, i})
			lo = -1
		}
	}
	return out
}

// streamCallKey is the task key of a streaming call's call-level faults
// (the input length N of a Pmap call, unknown for a stream), and so the
// most items a stream may have: above every index it can reach, so that
// item failures win. A sequence that yields more fails the call
// (readStream).
const streamCallKey = 1 << 40

// streamBatch is one dealt batch of a stream: its items until it
// completes, then its results until the sink has had them.
type streamBatch[T, U any] struct {
	b      sched.Batch
	in     []T
	out    []U
	done   bool // completed
	ok     bool
	failed []int    // positions without a result (CollectAll), ascending
	bufs   [][]byte // received buffers its results alias (ReuseBuffers: back to the pool after the sink)
}

// streamStore is PmapStream's window on the root: the items read ahead of
// the scheduler (queue), the dealt batches until the sink has had their
// results (open), and the batches ready for the sink (ready). Every field
// is under mu (the scheduler lock). The window bounds read − sunk: the
// items read from the sequence and not yet through the sink, in flight or
// waiting, whatever the order.
type streamStore[T, U any] struct {
	mu        *sync.Mutex
	sch       *sched.Scheduler
	window    int
	unordered bool
	failFast  bool

	queue   [][]T                      // the chunks read, not yet dealt: items [next, read)
	qhead   int                        // the items of queue[0] already dealt
	read    int                        // items read from the sequence
	sunk    int                        // items through the sink (or dropped)
	open    map[int]*streamBatch[T, U] // by first index: dealt, not yet handed to the sink
	front   int                        // ordered: the first index not yet handed to the sink
	ready   []*streamBatch[T, U]
	failed  map[int]bool // failed items of open batches
	missed  []missingRange
	ended   bool      // the call's engine has finished: no more dealing
	sinkErr bool      // the sink failed: it is called no more
	peakRes int       // the largest read − sunk seen
	pool    *bodyPool // ReuseBuffers: where remote bulk results are received (nil: fresh memory)
	wg      sync.WaitGroup

	space, more, sinkWake *sync.Cond
	changed               atomic.Bool  // items arrived or the input closed (the coordinator retries waiting READYs)
	hungry                atomic.Bool  // a dispatch got Wait: the reader hands over what it has at once
	totalN                atomic.Int64 // the input's length, -1 until it is closed
}

func newStreamStore[T, U any](mu *sync.Mutex, sch *sched.Scheduler, window int, unordered, failFast bool) *streamStore[T, U] {
	s := &streamStore[T, U]{mu: mu, sch: sch, window: window, unordered: unordered, failFast: failFast,
		open: map[int]*streamBatch[T, U]{}, failed: map[int]bool{}}
	s.space, s.more, s.sinkWake = sync.NewCond(mu), sync.NewCond(mu), sync.NewCond(mu)
	s.totalN.Store(-1)
	return s
}

func (s *streamStore[T, U]) assigned(b sched.Batch) {
	var in []T
	if head := s.queue[0][s.qhead:]; len(head) >= b.Count {
		in = head[:b.Count:b.Count] // within one chunk: no copy
		s.qhead += b.Count
	} else {
		in = make([]T, 0, b.Count)
		for len(in) < b.Count {
			head := s.queue[0][s.qhead:]
			k := min(len(head), b.Count-len(in))
			in = append(in, head[:k]...)
			s.qhead += k
			if s.qhead == len(s.queue[0]) {
				s.popChunk()
			}
		}
	}
	if len(s.queue) > 0 && s.qhead == len(s.queue[0]) {
		s.popChunk()
	}
	s.open[b.Start] = &streamBatch[T, U]{b: b, in: in, out: make([]U, b.Count)}
}

// popChunk drops the queue's first chunk, every item of which is dealt.
func (s *streamStore[T, U]) popChunk() {
	s.queue[0] = nil
	s.queue, s.qhead = s.queue[1:], 0
}

func (s *streamStore[T, U]) batch(b sched.Batch) *streamBatch[T, U] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[b.Start]
}

func (s *streamStore[T, U]) items(b sched.Batch) []T { return s.batch(b).in }
func (s *streamStore[T, U]) hold(b sched.Batch, bufs [][]byte) {
	if s.pool != nil && len(bufs) > 0 {
		sb := s.batch(b)
		sb.bufs = append(sb.bufs, bufs...)
	}
}
func (s *streamStore[T, U]) results(b sched.Batch) []U { return s.batch(b).out }
func (s *streamStore[T, U]) failedItem(i int)          { s.failed[i] = true }
func (s *streamStore[T, U]) total() int                { return int(s.totalN.Load()) }
func (s *streamStore[T, U]) awaitMore() {
	s.hungry.Store(true)
	s.more.Wait()
}

func (s *streamStore[T, U]) completed(b sched.Batch, ok bool) {
	sb := s.open[b.Start]
	sb.in, sb.ok, sb.done = nil, ok, true
	for i := b.Start; len(s.failed) > 0 && i < b.End(); i++ {
		if s.failed[i] {
			delete(s.failed, i)
			sb.failed = append(sb.failed, i-b.Start)
		}
	}
	if !ok {
		s.missed = append(s.missed, missingRange{b.Start, b.End()})
	}
	if s.unordered {
		delete(s.open, b.Start)
		s.ready = append(s.ready, sb)
	} else {
		for sb := s.open[s.front]; sb != nil && sb.done; sb = s.open[s.front] {
			delete(s.open, s.front)
			s.ready = append(s.ready, sb)
			s.front = sb.b.End()
		}
	}
	s.sinkWake.Signal()
}

func (s *streamStore[T, U]) missing(sch *sched.Scheduler, listed map[int]bool) []missingRange {
	var out []missingRange
	add := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if listed[i] {
				continue
			}
			if n := len(out); n > 0 && out[n-1].hi == i {
				out[n-1].hi++
			} else {
				out = append(out, missingRange{i, i + 1})
			}
		}
	}
	slices.SortFunc(s.missed, func(a, b missingRange) int { return cmp.Compare(a.lo, b.lo) })
	for _, m := range s.missed {
		add(m.lo, m.hi)
	}
	add(sch.Next(), s.read) // read, never dealt
	return out
}

// push adds a chunk of items read from the sequence (under mu, space
// reserved by reserve; the chunk is the store's from now on) and wakes
// whoever waits for them.
func (s *streamStore[T, U]) push(items []T) error {
	if len(items) == 0 {
		return nil
	}
	if err := s.sch.Extend(len(items)); err != nil {
		return err
	}
	s.queue = append(s.queue, items)
	s.changed.Store(true)
	s.more.Broadcast()
	return nil
}

// close marks the input's end (under mu).
func (s *streamStore[T, U]) close() {
	if s.totalN.Load() < 0 {
		s.sch.CloseInput()
		s.totalN.Store(int64(s.read))
		s.changed.Store(true)
		s.more.Broadcast()
	}
}

// reserve waits (under mu) until the window has room and returns how many
// more items may be read now (at most most), 0 once the call has ended or
// failed, or the stream has reached streamCallKey items.
func (s *streamStore[T, U]) reserve(most int) int {
	for !s.ended && !s.sch.Failed() && s.read-s.sunk >= s.window {
		s.space.Wait()
	}
	if s.ended || s.sch.Failed() {
		return 0
	}
	n := min(most, s.window-(s.read-s.sunk), streamCallKey-s.read)
	s.read += n
	s.peakRes = max(s.peakRes, s.read-s.sunk)
	return n
}

// unreserve gives back n reserved items that were not read (under mu).
func (s *streamStore[T, U]) unreserve(n int) {
	s.read -= n
	s.space.Broadcast()
}

// kick wakes the reader and the waiting root slots (under mu): the call
// is failing.
func (s *streamStore[T, U]) kick() {
	s.space.Broadcast()
	s.more.Broadcast()
}

// end stops the reading and wakes every goroutine of the window (under
// mu): the call's engine has finished.
func (s *streamStore[T, U]) end() {
	s.ended = true
	s.space.Broadcast()
	s.more.Broadcast()
	s.sinkWake.Broadcast()
}

// bodyAlloc is where the root receives the segments of a segmented RESULT
// (recvSegments): a stream's pool with ReuseBuffers, else fresh memory
// that becomes the results.
func (r *rootLoop[T, U]) bodyAlloc() func(int) []byte {
	if r.stream != nil && r.stream.pool != nil {
		return r.stream.pool.get
	}
	return func(n int) []byte { return make([]byte, n) }
}

// bodyPool is the receive buffers of a PmapStream call with ReuseBuffers:
// a remote rank's bulk results are received into them (each result
// aliases its buffer), and a batch's buffers come back (put) once the sink
// has returned for every item of the batch. At most keep buffers wait for
// reuse (no more than the window: the window bounds the ones in use, so
// that many free ones serve every batch of a steady stream).
type bodyPool struct {
	mu   sync.Mutex
	keep int // the most free buffers kept: min(window, poolKeep)
	free [][]byte
	made int // buffers allocated (tests)
	gets int // buffers handed out (tests)
}

// poolKeep is the most free buffers a bodyPool keeps (and at most the
// window: startStream).
const poolKeep = 64

// get returns a buffer of n bytes: the smallest free one that holds n and
// wastes at most about half of itself, or a new one.
func (p *bodyPool) get(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gets++
	best := -1
	for i, b := range p.free {
		if c := cap(b); c >= n && c <= 2*n+4096 && (best < 0 || c < cap(p.free[best])) {
			best = i
		}
	}
	if best < 0 {
		p.made++
		return make([]byte, n)
	}
	b := p.free[best]
	last := len(p.free) - 1
	p.free[best], p.free[last] = p.free[last], nil
	p.free = p.free[:last]
	return b[:n]
}

// put gives bufs back: the values aliasing them are no longer the sink's.
func (p *bodyPool) put(bufs [][]byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range bufs {
		if len(p.free) < p.keep {
			p.free = append(p.free, b)
		}
	}
}
