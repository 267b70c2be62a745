package lanes

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/hataori/hataori-go/hataori"
)

// Executor returns l as a hataori.Executor, the local-execution seam of
// Hataori's collective calls: PmapLanes passes it to hataori.PmapOn, and any
// other call taking an Executor can run its batches on these lanes.
//
// Enter claims the lanes (ErrBusy when they are running) and starts one
// goroutine per lane, each locked to an OS thread of its own, for the whole
// collective call; the release it returns cancels them and joins them in
// index order. Start deals a batch's items to the lanes from a shared next
// index, with slot = lane index, evaluates every item, and calls the
// batch's Done once the last item has returned. Offloads reports true:
// the calling goroutine stays free to coordinate (make the MPI calls) while
// the lanes compute. Slots is the lane count.
//
// Run must not panic by the Executor contract. Should it panic all the
// same, the item counts as finished and the lane goes on; should it call
// runtime.Goexit (testing.T.FailNow, for example), the item counts as
// finished and a new goroutine, locked to a new OS thread, takes over the
// lane (same slot, same engine) and the rest of its batch. Either way the
// batch ends with one Done, and the release re-raises the first such panic
// (a Goexit as a Goexit) after joining the lanes.
func (l *Lanes[E]) Executor() hataori.Executor { return &executor[E]{l: l} }

type executor[E any] struct {
	l *Lanes[E]

	mu  sync.Mutex
	run *execRun // the lanes of the current Enter, nil outside one
}

// execRun is one Enter: the lane goroutines and how to reach them.
type execRun struct {
	stop    chan struct{}
	batches []chan *execBatch
	done    []chan struct{}

	panicMu sync.Mutex
	panic   *PanicError // the first panic (or Goexit) raised by a batch's Run
}

// execBatch is one batch being dealt to the lanes.
type execBatch struct {
	b    hataori.Batch
	next atomic.Int64
	left atomic.Int64
}

func (x *executor[E]) Enter() (func(), error) {
	if err := x.l.acquire(); err != nil {
		return nil, err
	}
	n := x.l.Count()
	r := &execRun{stop: make(chan struct{}), batches: make([]chan *execBatch, n), done: make([]chan struct{}, n)}
	for i := range n {
		// Capacity 2: Start never waits for a lane that is still leaving
		// the previous batch.
		r.batches[i] = make(chan *execBatch, 2)
		r.done[i] = make(chan struct{})
		go r.serve(i, nil)
	}
	x.mu.Lock()
	x.run = r
	x.mu.Unlock()

	var once sync.Once
	release := func() {
		once.Do(func() {
			x.mu.Lock()
			x.run = nil
			x.mu.Unlock()
			close(r.stop)
			for i := range n {
				<-r.done[i]
			}
			x.l.releaseBusy()
			if r.panic != nil {
				r.panic.raise()
			}
		})
	}
	return release, nil
}

func (x *executor[E]) Offloads() bool { return true }

func (x *executor[E]) Slots() int { return x.l.Count() }

func (x *executor[E]) Start(b hataori.Batch) {
	if b.N <= 0 {
		b.Done()
		return
	}
	x.mu.Lock()
	r := x.run
	x.mu.Unlock()
	eb := &execBatch{b: b}
	eb.left.Store(int64(b.N))
	if r == nil {
		// Outside Enter/release (a caller bug): still honour the
		// contract, on the calling goroutine as slot 0.
		eb.inline()
		return
	}
	// A lane ends only once the run is cancelled (a lane whose Run
	// Goexits is taken over by a new goroutine), so every lane receives
	// the batch. Only a Start racing with the release (a caller bug) can
	// find lanes gone; with none left, the batch runs inline.
	alive := 0
	for i, ch := range r.batches {
		select {
		case ch <- eb:
			alive++
		case <-r.done[i]:
		}
	}
	if alive == 0 {
		eb.inline()
	}
}

// serve is lane i's goroutine for one Enter: locked to its own OS thread
// (never unlocked, so the thread ends with it), it works on every batch it
// is handed until the run is cancelled. resume is a batch to finish first:
// the one a previous goroutine of lane i was working on when its Run
// called runtime.Goexit (nil for the first goroutine).
//
// A Goexit cannot be recovered: it ends this goroutine (and its thread)
// once runItem has counted the item. The deferred function then hands the
// lane to a new goroutine, so the batch's remaining items still run, on
// slot i, and Done is still called; done[i] is closed only by the goroutine
// that leaves on stop, so the release joins the lane's last goroutine.
func (r *execRun) serve(i int, resume *execBatch) {
	runtime.LockOSThread()
	cur, clean := resume, false
	defer func() {
		if clean {
			close(r.done[i])
			return
		}
		go r.serve(i, cur)
	}()
	if cur != nil {
		cur.work(i, r)
	}
	for {
		select {
		case eb := <-r.batches[i]:
			cur = eb
			eb.work(i, r)
		case <-r.stop:
			clean = true
			return
		}
	}
}

// work evaluates items of the batch on lane until none is left to hand out.
// Every item is evaluated: the result of Run is ignored.
func (eb *execBatch) work(lane int, r *execRun) {
	n := int64(eb.b.N)
	for {
		i := eb.next.Add(1) - 1
		if i >= n {
			return
		}
		eb.runItem(lane, int(i), r)
	}
}

// inline works on the whole batch on the calling goroutine, as slot 0
// (Start outside Enter/release). A panic of Run is re-raised once the batch
// has ended; a Goexit leaves the remaining items unrun, but accounted, so
// Done is still called before the caller's goroutine exits.
func (eb *execBatch) inline() {
	r := &execRun{}
	normal := false
	defer func() {
		if !normal {
			eb.abandon()
		}
	}()
	eb.work(0, r)
	normal = true
	if r.panic != nil {
		r.panic.raise()
	}
}

// abandon claims every item not yet handed out and counts it as finished
// without running it, calling Done if that ends the batch.
func (eb *execBatch) abandon() {
	n := int64(eb.b.N)
	if claimed := eb.next.Swap(n); claimed < n {
		if eb.left.Add(claimed-n) == 0 {
			eb.b.Done()
		}
	}
}

// runItem calls Run and counts the item as finished; whoever finishes the
// last item calls Done. Run never panics by the Executor contract; should it
// panic (or call runtime.Goexit) all the same, the item still counts as
// finished, so the batch ends, and the first such panic is recorded in r
// for the release (or inline) to re-raise.
func (eb *execBatch) runItem(lane, i int, r *execRun) {
	normal := false
	defer func() {
		if !normal {
			p := capturePanic(lane, recover())
			r.panicMu.Lock()
			if r.panic == nil {
				r.panic = p
			}
			r.panicMu.Unlock()
		}
		if eb.left.Add(-1) == 0 {
			eb.b.Done()
		}
	}()
	eb.b.Run(lane, i)
	normal = true
}
