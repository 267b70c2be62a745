package hataori

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/internal/sched"
)

// PmapStream is [PmapContext] over a lazy input, with every result handed
// to sink as it becomes due instead of collected: the root reads items
// from its sequence only as slots need them, and holds at most
// opts.Window items and results at any time (see [Options].Window),
// however long the sequence. i is an item's position in the sequence.
//
// It is collective like Pmap (the same preflight and options agreement,
// slots, automatic or fixed batches, error policies, cancellation,
// progress and statistics): the root passes Some(seq) and a sink, every
// other rank None and a nil sink (never called there). The sink runs on
// the root only, on a goroutine of its own (neither a slot nor the
// coordinator, so a slow sink never keeps the other ranks waiting: the
// dealing pauses once the window is full), one call at a time, in input
// order, or in completion order with opts.Unordered. A value the sink
// receives is its own to keep, unless opts.ReuseBuffers is set: then the
// bulk data of a result computed on another rank (a []byte or numeric
// slice result, or a Bulk inside one) may lie in a buffer that is reused
// once the sink returns, and is valid only until then, as with
// bufio.Scanner.Bytes; copy what must outlive the call.
//
// The sequence runs on a goroutine of its own on the root and is read
// ahead of the slots by at most the window; when the call stops early
// its yield returns false, and PmapStream returns only after the
// sequence has returned. Progress.Total is -1 until the sequence has
// ended.
//
// Errors are those of Pmap: every rank returns the same *[PmapError]. A
// sink error stops the call as a failing item does under FailFast, with
// Index that item and Rank the root (under CollectAll too). Under
// FailFast the sink is not called again once the call is failing, so in
// input order it has received a prefix of the results, all below the
// error's Index; under CollectAll it receives every success, and the
// error's Failures lists the failed items and those read from the
// sequence that ended without a result (items never read are not
// listed). A panic in the sink or the sequence aborts the job with
// ExitPanic, like a panic in a callback.
func PmapStream[T, U any](ctx context.Context, comm Comm, d *Domain, opts Options, rootItems Maybe[iter.Seq[T]], f func(ctx context.Context, item T) (U, error), sink func(i int, u U) error) error {
	seq, present := rootItems.Get()
	in := pmapInput[T, U]{present: present, fn: funcCode(f)}
	var extra *failure
	if present {
		in.stream = &streamSpec[T, U]{seq: seq, sink: sink, window: opts.Window, unordered: opts.Unordered, reuse: opts.ReuseBuffers}
		switch {
		case seq == nil || sink == nil:
			extra = &failure{Code: failDomain, Err: ErrNilCallback, Message: "PmapStream: nil sequence or sink on the root"}
		case opts.Window < 0:
			extra = &failure{Code: failOptions, Err: ErrInvalidOptions, Message: fmt.Sprintf("negative window %d", opts.Window)}
		}
		if in.stream.window == 0 {
			in.stream.window = DefaultWindow
		}
	}
	_, err := pmapWith(ctx, comm, d, opts, in, f, extra)
	return err
}

// streamSpec is a PmapStream call's input and output on the root.
type streamSpec[T, U any] struct {
	seq       iter.Seq[T]
	sink      func(int, U) error
	window    int
	unordered bool
	reuse     bool // Options.ReuseBuffers
}

// readChunk is the most items the reader takes from the sequence before it
// hands them to the scheduler. While a dispatch waits for items (hungry)
// it hands them over sooner: once it holds hungryChunk items, or once
// hungryWait has passed since the chunk's first item (a slow sequence), so
// that waiting slots get batches of a useful size rather than one item
// each, and a sequence slower than its consumers costs them no more than
// hungryWait of latency.
const (
	readChunk   = 1024
	hungryChunk = 64
	hungryWait  = 50 * time.Microsecond
)

// startStream makes the root's window of window items for sp and starts
// its reader and sink goroutines.
func (r *rootLoop[T, U]) startStream(sp *streamSpec[T, U], window int) *streamStore[T, U] {
	ss := newStreamStore[T, U](&r.mu, r.sch, window, sp.unordered, !r.c.collect)
	if sp.reuse {
		ss.pool = &bodyPool{keep: min(ss.window, poolKeep)}
	}
	r.stream = ss
	ss.wg.Add(2)
	go r.readStream(ss, sp.seq)
	go r.sinkStream(ss, sp.sink)
	return ss
}

// endStream, once the coordinator's loop has ended, stops the reader,
// lets the sink take every result that is due and waits for both.
func (r *rootLoop[T, U]) endStream(ss *streamStore[T, U]) {
	r.mu.Lock()
	ss.end()
	r.mu.Unlock()
	ss.wg.Wait()
	r.pan.check(r.k)
	tracef("stream-end peak=%d window=%d", ss.peakRes, ss.window)
}

// readStream is the reader goroutine: it ranges over seq, handing items
// to the window in chunks, within the window's room, and closes the
// input when seq returns by itself. A panic in seq is recorded for the
// coordinator, which aborts the job.
func (r *rootLoop[T, U]) readStream(ss *streamStore[T, U], seq iter.Seq[T]) {
	defer ss.wg.Done()
	normal := false
	defer func() {
		if !normal {
			r.pan.record(capturePanic(recover()))
		}
	}()
	r.mu.Lock()
	room := r.reserve(ss)
	r.mu.Unlock()
	chunk := make([]T, 0, min(room, readChunk))
	var first time.Time // when chunk's first item came, read only when hungry
	stopped := room == 0
	if !stopped {
		seq(func(x T) bool {
			if stopped {
				return false // a sequence that yields on after false
			}
			chunk = append(chunk, x)
			if room--; room > 0 && !ss.hungry.Load() {
				return true
			}
			if room > 0 && len(chunk) < hungryChunk {
				if first.IsZero() {
					first = time.Now()
					return true
				}
				if time.Since(first) < hungryWait {
					return true
				}
			}
			r.mu.Lock()
			r.pushChunk(ss, chunk, room)
			room = r.reserve(ss)
			r.mu.Unlock()
			chunk, first = make([]T, 0, min(room, readChunk)), time.Time{} // the last one is the store's
			stopped = room == 0
			return !stopped
		})
	}
	normal = true
	r.mu.Lock()
	defer r.mu.Unlock()
	if !stopped {
		r.pushChunk(ss, chunk, room)
		ss.close()
	}
	r.pan.nudge()
}

// reserve is ss.reserve(readChunk) for the reader (under mu); a stream
// that has reached streamCallKey items fails the call there, since its
// indices would reach the call-level key.
func (r *rootLoop[T, U]) reserve(ss *streamStore[T, U]) int {
	n := ss.reserve(readChunk)
	if n == 0 && !ss.ended && !r.sch.Failed() {
		r.rep.addCall(streamCallKey, sched.ClassDrain, KindProtocol,
			fmt.Sprintf("rank %d: the sequence yields more than %d items", r.k.Rank, streamCallKey), nil)
		r.c.haltAll()
		r.sch.Fail()
		r.noteFailed()
	}
	return n
}

// pushChunk hands the items of chunk to the window and gives back the
// unused room (under mu). Items read after the call has ended or failed
// are dropped.
func (r *rootLoop[T, U]) pushChunk(ss *streamStore[T, U], chunk []T, room int) {
	ss.unreserve(room)
	if ss.ended || r.sch.Failed() {
		return
	}
	if err := ss.push(chunk); err != nil {
		r.setFatal(err)
	}
	ss.hungry.Store(false)
	r.pan.nudge() // READYs may wait for these items
}

// sinkStream is the sink goroutine: it hands every batch the window has
// made ready to sink, one item at a time, skipping the items without a
// result, and gives their room back. A sink error stops the call
// (sinkFailed); a panic in sink is recorded for the coordinator.
func (r *rootLoop[T, U]) sinkStream(ss *streamStore[T, U], sink func(int, U) error) {
	defer ss.wg.Done()
	normal := false
	defer func() {
		if !normal {
			r.pan.record(capturePanic(recover()))
		}
	}()
	r.mu.Lock() // not deferred: a panic in sink leaves mu unlocked
	for {
		for len(ss.ready) == 0 && !ss.ended {
			ss.sinkWake.Wait()
		}
		if len(ss.ready) == 0 {
			break
		}
		sb := ss.ready[0]
		ss.ready[0] = nil
		ss.ready = ss.ready[1:]
		drop := ss.sinkErr || !sb.ok || (ss.failFast && r.sch.Failed())
		bad, err := -1, error(nil)
		if !drop {
			r.mu.Unlock()
			bad, err = deliver(sb, sink)
			r.mu.Lock()
		}
		if ss.pool != nil {
			ss.pool.put(sb.bufs) // the sink has returned for every item of sb
			sb.bufs = nil
		}
		ss.sunk += sb.b.Count
		ss.space.Broadcast()
		if err != nil {
			r.sinkFailed(ss, bad, err)
		}
	}
	r.mu.Unlock()
	normal = true
}

// deliver calls sink for each result of sb in order, skipping the failed
// positions; it returns the index and error of a failing call.
func deliver[T, U any](sb *streamBatch[T, U], sink func(int, U) error) (int, error) {
	f := 0
	for p, u := range sb.out {
		if f < len(sb.failed) && sb.failed[f] == p {
			f++
			continue
		}
		if err := sink(sb.b.Start+p, u); err != nil {
			return sb.b.Start + p, err
		}
	}
	return -1, nil
}

// sinkFailed stops the call at item i, whose sink call failed with err
// (under mu): an item failure of the root, under either policy.
func (r *rootLoop[T, U]) sinkFailed(ss *streamStore[T, U], i int, err error) {
	ss.sinkErr = true
	me := r.k.Rank
	msg := errmsg.Bound(fmt.Sprintf("rank %d: the sink failed at item %d: %v", me, i, err))
	r.rep.addItem(i, sched.ClassUser, KindUser, msg, err)
	if r.c.collect {
		r.rep.note(ItemFailure{Index: i, Kind: KindUser, Rank: me, Message: msg, err: err})
	}
	r.c.failAt(int64(i))
	r.sch.Fail()
	r.noteFailed()
}

// retryWaiting answers again the READYs that got Wait, once items have
// arrived, the input has ended or the call is failing. Coordinator only.
func (r *rootLoop[T, U]) retryWaiting() {
	if len(r.waiting) == 0 || !(r.stream.changed.Swap(false) || r.failing.Load()) {
		return
	}
	w := r.waiting
	r.waiting = nil
	for _, x := range w {
		r.onReady(x.rank, x.slot, x.status)
	}
}

// waitingReady is a READY that got Wait: no item was available yet.
type waitingReady struct {
	rank, slot int
	status     uint8
}
