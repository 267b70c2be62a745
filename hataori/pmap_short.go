package hataori

import (
	"reflect"
	"sync"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/internal/sched"
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
// root, the input's length times the previous call's cost per item on
// this rank (shortCost); on another rank, the previous call's whole
// callback time here (it does not know the input's length). Each rank decides for
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

// shortCost is what a successful call measured on this rank, from what
// the engine measures anyway: on the root, its scheduler's cost per item
// for the root's own slots (sched.Estimate.ItemCost, the larger of a
// moving average and the last batch's; measured false when the root ran
// no batch); on another rank, the callback time its slots' meters added
// up.
type shortCost struct {
	perItem  time.Duration
	measured bool
	work     time.Duration
}

// shortMemo holds the last successful call's cost per key, on the MPI
// main thread (the collective calls are not reentrant); it forgets all
// of them when it grows past shortMemoMax entries.
var shortMemo struct {
	sync.Mutex
	m map[shortKey]shortCost
}

const shortMemoMax = 64

// rootCost is the root's shortCost from its scheduler's statistics.
func rootCost(st *sched.Stats, root int) shortCost {
	e := st.Estimates[root]
	return shortCost{perItem: e.ItemCost, measured: e.Measured > 0}
}

// remoteCost is another rank's shortCost from its slots' meters.
func remoteCost(meters []slotMeter) shortCost {
	var c shortCost
	for _, m := range meters {
		c.work += m.busy
	}
	return c
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
// threads tells whether MPI allows other threads (MPI_THREAD_FUNNELED or
// more): a domain's callbacks may run on the coordinator only then, since
// its preflight must still fail otherwise.
func shortPath(exec seam.Executor, threads bool, key shortKey, root bool, n int) (_ seam.Executor, _ shortKey, taken bool) {
	var short seam.Executor
	switch e := exec.(type) {
	case helperExec:
		if !e.inline {
			short = helperExec{inline: true}
		}
	case domainExec:
		if mode := e.mode.resolve(true); threads && e.d != nil && (mode == Outer || mode == Sequential) {
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
	case n < 0 || !c.measured:
		return false
	}
	return time.Duration(n)*c.perItem <= shortWork
}

// noteShort remembers the cost c measured for a call under key.
func noteShort(key shortKey, c shortCost) {
	if key.fn == 0 {
		return
	}
	shortMemo.Lock()
	defer shortMemo.Unlock()
	if shortMemo.m == nil || len(shortMemo.m) >= shortMemoMax {
		shortMemo.m = make(map[shortKey]shortCost)
	}
	shortMemo.m[key] = c
}
