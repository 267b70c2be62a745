package hataori

import (
	"fmt"
	"sync"

	"github.com/hataori/hataori-go/hataori/internal/sched"
)

// pmapTrace, when set by a test, receives the coordinator's events
// ("open", "send kind=TASK to=1", "recv-result rank=1",
// "root-batch-start", "root-batch-done", …) on the coordinator goroutine.
var pmapTrace func(ev string)

// pmapRootStats, when set by a test, receives the root scheduler's
// instrumentation at the end of every call.
var pmapRootStats func(sched.Stats)

// traceMu serialises pmapTrace: the root's slots report their batches
// from their own goroutines.
var traceMu sync.Mutex

func tracef(format string, args ...any) {
	if pmapTrace != nil {
		traceMu.Lock()
		pmapTrace(fmt.Sprintf(format, args...))
		traceMu.Unlock()
	}
}

// report is a rank's best (lowest-key) recoverable error of one call. It
// is not synchronised: the root adds to it under its scheduler lock.
type report struct {
	k    *collective
	key  int64
	kind PmapErrorKind
	msg  string
	err  error
	bad  string // an error key that could not be encoded
}

func newReport(k *collective) *report { return &report{k: k, key: sched.NoError} }

// add records an error with task key taskKey and class, reported by this
// rank. A key that cannot be encoded is an internal failure: the job aborts
// with ExitProtocol.
func (r *report) add(taskKey int64, class sched.Class, kind PmapErrorKind, msg string, err error) {
	key, kerr := sched.Key(taskKey, class, r.k.size, r.k.rank)
	if kerr != nil {
		// Recorded, not aborted here: add may run off the MPI main thread
		// (on one of the root's slots); converge aborts.
		if r.bad == "" {
			r.bad = fmt.Sprintf("error key: %v", kerr)
		}
		return
	}
	if key < r.key {
		r.key, r.kind, r.msg, r.err = key, kind, msg, err
	}
}

// failed reports whether this rank recorded an error.
func (r *report) failed() bool { return r.key != sched.NoError }

// converge runs the final collective convergence and returns nil when no
// rank reported an error, else the identical winning *PmapError. The kind
// travels as the first byte of the broadcast message.
func (r *report) converge() error {
	if r.bad != "" {
		r.k.abortProtocol(r.bad)
	}
	code, msg := int32(0), ""
	if r.failed() {
		code, msg = int32(r.kind), r.msg
	}
	wk, wcode, wmsg, err := r.k.convergeCoded(r.key, code, msg)
	if err != nil {
		r.k.abortTransport(err)
	}
	if wk == sched.NoError {
		return nil
	}
	kind := PmapErrorKind(wcode)
	if kind < KindReentrant || kind > KindCanceled {
		kind = KindProtocol
	}
	e := &PmapError{Kind: kind, Key: wk, Rank: int(wk % int64(r.k.size)), Message: wmsg}
	if wk == r.key {
		e.err = r.err
	}
	return e
}
