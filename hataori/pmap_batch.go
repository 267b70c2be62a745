package hataori

import (
	"fmt"
	"os"
	"sync"
)

// batchLane runs one batch at a time of a Pmap call through an Executor
// (capacity one). Items are read from, and results written straight into,
// the slices it is given: on the root these are windows of the caller's
// input and of the result table, so nothing is copied or serialized.
type batchLane[T, U any] struct {
	exec  Executor
	f     func(slot int, item T) (U, error)
	done  chan struct{} // capacity one: Batch.Done signals here
	batch Batch         // reused; Run and Done are bound once

	items []T
	out   []U

	mu     sync.Mutex
	errIdx int // lowest failing position in the batch, -1 if none
	err    error
	panic  *PanicError
}

func newBatchLane[T, U any](exec Executor, f func(int, T) (U, error)) *batchLane[T, U] {
	l := &batchLane[T, U]{exec: exec, f: f, done: make(chan struct{}, 1)}
	l.batch = Batch{Run: l.run, Done: l.signal}
	return l
}

// start hands items to the executor; results land in out. A
// non-offloading executor has finished (and signalled) when start returns.
func (l *batchLane[T, U]) start(items []T, out []U) {
	l.items, l.out = items, out
	l.errIdx, l.err, l.panic = -1, nil, nil
	l.batch.N = len(items)
	l.exec.Start(l.batch)
}

func (l *batchLane[T, U]) signal() { l.done <- struct{}{} }

// run evaluates item i of the current batch. It never panics: a panic (or
// runtime.Goexit) of the callback is recorded for the coordinator, which
// aborts the job.
func (l *batchLane[T, U]) run(slot, i int) (ok bool) {
	normal := false
	defer func() {
		if !normal {
			p := capturePanic(recover())
			l.mu.Lock()
			if l.panic == nil {
				l.panic = p
			}
			l.mu.Unlock()
			ok = false
		}
	}()
	u, err := l.f(slot, l.items[i])
	normal = true
	if err != nil {
		l.mu.Lock()
		if l.errIdx < 0 || i < l.errIdx {
			l.errIdx, l.err = i, err
		}
		l.mu.Unlock()
		return false
	}
	l.out[i] = u
	return true
}

// finish is called by the coordinator after receiving from done. A
// recorded panic aborts the job with ExitPanic, printing the panic value
// and stack first; it returns otherwise.
func (l *batchLane[T, U]) finish(k *collective) {
	l.items, l.out = nil, nil
	if p := l.panic; p != nil {
		fmt.Fprintf(os.Stderr, "hataori: Pmap callback panicked: %v\n\n%s\n", p.Value, p.Stack)
		abortJob(ExitPanic, "callback panic in Pmap")
	}
}
