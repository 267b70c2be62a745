package hataori

import (
	"fmt"
	"os"
	"sync/atomic"
)

// batchOutcome is what evaluating one batch on a slot left behind.
type batchOutcome struct {
	errIdx int   // lowest failing position in the batch, -1 if none
	err    error // that item's error
}

// evalBatch evaluates f over items on slot, writing results into out (a
// window of the result table on the root, a fresh slice elsewhere, so
// nothing is copied or serialized on the root). With stopOnError
// (Sequential, Inner, MPI-only) it stops after the first failing item;
// otherwise (Outer, lanes) it evaluates every item. It reports a panic (or
// runtime.Goexit) of f through pan instead of raising it and returns
// false then; the coordinator aborts the job.
func evalBatch[T, U any](f func(int, T) (U, error), slot int, items []T, out []U, stopOnError bool, pan *panicSlot) (o batchOutcome, ok bool) {
	o.errIdx = -1
	for i := range items {
		u, err, normal := callItem(f, slot, items[i], pan)
		if !normal {
			return o, false
		}
		if err != nil {
			if o.errIdx < 0 {
				o.errIdx, o.err = i, err
			}
			if stopOnError {
				return o, true
			}
			continue
		}
		out[i] = u
	}
	return o, true
}

// callItem calls f once; a panic or Goexit is recorded in pan and reported
// as normal == false. A Goexit cannot be stopped: the slot's goroutine ends
// after the record, and the coordinator aborts the job.
func callItem[T, U any](f func(int, T) (U, error), slot int, item T, pan *panicSlot) (u U, err error, normal bool) {
	defer func() {
		if !normal {
			pan.record(capturePanic(recover()))
		}
	}()
	u, err = f(slot, item)
	return u, err, true
}

// panicSlot holds the first panic raised by user code on a slot during one
// call, for the coordinator, which alone may call MPI_Abort.
type panicSlot struct {
	p    atomic.Pointer[PanicError]
	wake chan struct{} // capacity one: nudges a coordinator that is waiting
}

func newPanicSlot() *panicSlot { return &panicSlot{wake: make(chan struct{}, 1)} }

func (s *panicSlot) record(p *PanicError) {
	if s.p.CompareAndSwap(nil, p) {
		s.nudge()
	}
}

// nudge wakes a waiting coordinator without blocking.
func (s *panicSlot) nudge() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// check aborts the job with ExitPanic, printing the panic value and stack
// first, when a slot recorded a panic; it returns otherwise. It runs on
// the coordinator.
func (s *panicSlot) check(k *collective) {
	if p := s.p.Load(); p != nil {
		fmt.Fprintf(os.Stderr, "hataori: Pmap callback panicked: %v\n\n%s\n", p.Value, p.Stack)
		abortJob(ExitPanic, "callback panic in Pmap")
	}
}
