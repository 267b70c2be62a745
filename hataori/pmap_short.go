package hataori

import (
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/internal/seam"
)

// The short path of an MPI-only rank. Handing a batch from the
// coordinator to the slot's goroutine and back costs two thread hand-offs
// and, on a rank bound to one core, a GOMAXPROCS raise and restore (a
// stop-the-world each): tens of microseconds per call on a shared core,
// more than the MPI messages of a small call. An MPI-only rank whose
// previous call with the same callback on the same communicator (and the
// same root) shows that this call's work is small runs its batches on
// the coordinator instead, between messages, as at MPI_THREAD_SINGLE: no
// slot goroutine, no GOMAXPROCS change, no hand-off.
//
// "Small" is at most shortWork of callback time on this rank: on the
// root, the input's length times the previous call's time per item on
// this rank; on another rank, the previous call's whole callback time
// here (it does not know the input's length). Each rank decides for
// itself; the protocol is the same either way (a rank's slot count is
// its own). A call whose items turned slow since the previous one runs
// on the coordinator once, answering the other ranks only between its
// batches, and its measurement sends the next call back to the slot.
// A stream's root never takes the short path (its length is unknown),
// nor does the first call of a callback on a communicator.

// shortWork is the most callback time per rank that a call may spend on
// the coordinator: about the fixed cost the short path saves.
var shortWork = 250 * time.Microsecond // a variable for the tests (0: no short path)

// shortKey names what a call's measurement is remembered under: the
// communicator's handle, the callback's code (reflect's Pointer of the
// func value: one per function literal, shared by its closures), the
// root and this rank's role.
type shortKey struct {
	comm mpi.Handle
	fn   uintptr
	root int
}

// shortCost is one call's callback time and item count on this rank.
type shortCost struct {
	work  time.Duration
	items int64
}

// shortMemo holds the last successful call's cost per key, on the MPI
// main thread (the collective calls are not reentrant); it forgets all
// of them when it grows past shortMemoMax entries.
var shortMemo struct {
	sync.Mutex
	m map[shortKey]shortCost
}

const shortMemoMax = 64

// workMeter adds up the callback time of a call's batches on this rank
// (any slot goroutine).
type workMeter struct{ ns, items atomic.Int64 }

func (w *workMeter) add(d time.Duration, items int) {
	w.ns.Add(int64(d))
	w.items.Add(int64(items))
}

// funcCode is the code pointer of f (a func value, possibly nil: 0).
func funcCode(f any) uintptr {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Func || v.IsNil() {
		return 0
	}
	return v.Pointer()
}

// shortPath returns the executor of a call on exec: its short-path form
// when this rank takes the short path (takeShort), else exec itself; and
// the key under which the call's cost is to be remembered (zero fn:
// nowhere, for an executor without a short path: lanes, an Inner domain,
// an MPI-only rank at MPI_THREAD_SINGLE, which runs inline anyway).
func shortPath(exec seam.Executor, key shortKey, root bool, n int) (_ seam.Executor, _ shortKey, taken bool) {
	var short seam.Executor
	switch e := exec.(type) {
	case helperExec:
		if !e.inline {
			short = helperExec{inline: true}
		}
	case domainExec:
		// A domain's callbacks may run on the coordinator only where
		// MPI allows other threads anyway (else its preflight fails).
		mode := e.mode.resolve(true)
		if lvl, err := mpi.QueryThread(); err == nil && lvl >= mpi.ThreadFunneled && e.d != nil && (mode == Outer || mode == Sequential) {
			short = domainExec{d: e.d, mode: mode, short: true}
		}
	}
	if short == nil {
		return exec, shortKey{}, false
	}
	if takeShort(key, root, n) {
		return short, key, true
	}
	return exec, key, false
}

// takeShort reports whether this rank runs the call on its coordinator:
// root tells whether it is the root, n is the root's input length (-1 for
// a stream).
func takeShort(key shortKey, root bool, n int) bool {
	if key.fn == 0 || shortWork <= 0 {
		return false
	}
	shortMemo.Lock()
	c, ok := shortMemo.m[key]
	shortMemo.Unlock()
	switch {
	case !ok:
		return false
	case !root:
		return c.work <= shortWork
	case n < 0 || c.items == 0:
		return false
	}
	return time.Duration(n)*(c.work/time.Duration(c.items)) <= shortWork
}

// noteShort remembers the cost w measured for a call under key.
func noteShort(key shortKey, w *workMeter) {
	if key.fn == 0 {
		return
	}
	shortMemo.Lock()
	defer shortMemo.Unlock()
	if shortMemo.m == nil || len(shortMemo.m) >= shortMemoMax {
		shortMemo.m = make(map[shortKey]shortCost)
	}
	shortMemo.m[key] = shortCost{work: time.Duration(w.ns.Load()), items: w.items.Load()}
}
