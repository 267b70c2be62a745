// The error report of one call: the faults a rank reports, and the final
// convergence that turns them into one *PmapError on every rank.

package hataori

import (
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/internal/sched"
)

// keyedFault is a report's entry: one recoverable error this rank reports,
// with its error key, kind and message, its original error, and whether it
// is about one item (then the key's task key is that item's index). The
// report keeps the best item-level and call-level one for the convergence.
type keyedFault struct {
	key  int64
	kind ErrorKind
	msg  string
	err  error
	item bool
}

// report is a rank's record of one call's recoverable errors: the best
// (lowest-key) item-level and call-level faults it reported, for the final
// convergence, and, under CollectAll, its list of failed items (the root's
// holds every rank's; another rank's only its own, for their original
// errors). It is not synchronised: the root adds to it under its scheduler
// lock, a remote rank on its coordinator.
type report struct {
	k       *coll.Coll
	root    int
	collect bool
	item    keyedFault // best item-level fault (key sched.NoError: none)
	call    keyedFault // best call-level fault (a frame, the context, …)
	bad     string
	list    []ItemFailure
	missing []missingRange // the root: items that ended without a result (CollectAll)
}

// missingRange is the items [lo, hi) that ended without a result (never
// ran, or lost when the call stopped): under CollectAll the root charges
// them to the converged error in the fault list.
type missingRange struct{ lo, hi int }

func newReport(k *coll.Coll, root int, collect bool) *report {
	return &report{k: k, root: root, collect: collect, item: keyedFault{key: sched.NoError}, call: keyedFault{key: sched.NoError}}
}

// addCall records an error that is not about one item (a call-level
// condition with task key N, or a malformed frame with its batch's first
// index) with class, reported by this rank. A key that cannot be encoded
// is an internal failure: the job aborts with ExitProtocol.
func (r *report) addCall(taskKey int64, class sched.Class, kind ErrorKind, msg string, err error) {
	r.put(&r.call, taskKey, class, keyedFault{kind: kind, msg: msg, err: err})
}

// addItem records the failure of item index with class (ClassUser or
// ClassWire), reported by this rank.
func (r *report) addItem(index int, class sched.Class, kind ErrorKind, msg string, err error) {
	r.put(&r.item, int64(index), class, keyedFault{kind: kind, msg: msg, err: err, item: true})
}

func (r *report) put(best *keyedFault, taskKey int64, class sched.Class, f keyedFault) {
	key, kerr := sched.Key(taskKey, class, r.k.Size, r.k.Rank)
	if kerr != nil {
		// Recorded, not aborted here: add may run off the MPI main thread
		// (on one of the root's slots); converge aborts.
		if r.bad == "" {
			r.bad = fmt.Sprintf("error key: %v", kerr)
		}
		return
	}
	if key < best.key {
		f.key = key
		*best = f
	}
}

// note appends one failed item to the list (CollectAll).
func (r *report) note(f ItemFailure) { r.list = append(r.list, f) }

// itemFlag marks, in the converged code, a winner that is about one item.
const itemFlag = 1 << 8

// converge runs the final collective convergence and returns nil when no
// rank reported an error, else the identical winning *PmapError. Under
// FailFast the lowest key of all wins (the lowest failing index first).
// Under CollectAll a call-level error wins over item failures, since it is
// what stopped the call (one more reduction, which every rank makes), and
// then the root broadcasts the list of failed items (broadcastFaultList).
// The kind, and whether the winner is about one item, travel in the code.
func (r *report) converge() error {
	if r.bad != "" {
		r.k.AbortProtocol(r.bad)
	}
	best := r.item
	if r.call.key < best.key {
		best = r.call
	}
	if r.collect {
		m, err := r.k.AllreduceMin([]int64{r.call.key})
		if err != nil {
			r.k.AbortTransport(err)
		}
		best = r.item
		if m[0] != sched.NoError {
			best = r.call
		}
	}
	code, msg := int32(0), ""
	if best.key != sched.NoError {
		code, msg = int32(best.kind), best.msg
		if best.item {
			code |= itemFlag
		}
	}
	wk, wcode, wmsg, err := r.k.ConvergeCoded(best.key, code, msg)
	if err != nil {
		r.k.AbortTransport(err)
	}
	if wk == sched.NoError {
		return nil
	}
	kind := ErrorKind(wcode &^ itemFlag)
	if kind < KindReentrant || kind > KindCanceled {
		kind = KindProtocol
	}
	e := &PmapError{Kind: kind, Index: -1, Key: wk, Rank: int(wk % int64(r.k.Size)), Message: wmsg}
	if wcode&itemFlag != 0 {
		task, _, _ := sched.SplitKey(wk, r.k.Size)
		e.Index = int(task)
	}
	if wk == best.key {
		e.err = best.err
	}
	if r.collect {
		e.Failures = r.broadcastFaultList(e)
	}
	return e
}
