package lanes_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// threadLog records the OS threads on which each key (an engine, an
// executor slot) was used, for the checks that every lane keeps one thread
// of its own for the whole of one call. It is safe for concurrent use; the
// zero value is ready.
type threadLog[K interface {
	comparable
	fmt.Stringer
}] struct {
	mu   sync.Mutex
	tids map[K]map[int]bool
}

// record notes that k is in use on the calling goroutine's OS thread.
func (l *threadLog[K]) record(k K) {
	tid := threadID()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tids == nil {
		l.tids = map[K]map[int]bool{}
	}
	if l.tids[k] == nil {
		l.tids[k] = map[int]bool{}
	}
	l.tids[k][tid] = true
}

// check reports, as errors of t, every key used on more than one thread or
// on the thread caller, and every thread shared by two keys. It returns
// the thread of each key that kept to one thread.
func (l *threadLog[K]) check(t testing.TB, caller int) map[int]K {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	owner := map[int]K{}
	for k, tids := range l.tids {
		if len(tids) != 1 {
			t.Errorf("%v used on %d threads, want one thread of its own", k, len(tids))
			continue
		}
		for tid := range tids {
			if tid == caller {
				t.Errorf("%v used on the caller's thread %d", k, tid)
			}
			if other, dup := owner[tid]; dup {
				t.Errorf("%v and %v share thread %d", other, k, tid)
			}
			owner[tid] = k
		}
	}
	return owner
}

// TestThreadLogCheck shows that check catches each mistake it looks for.
func TestThreadLogCheck(t *testing.T) {
	a, b := newPoolEngine(0, 1), newPoolEngine(1, 1)
	t.Cleanup(func() { a.close(); b.close() })
	cases := []struct {
		name   string
		tids   map[*poolEngine]map[int]bool
		caller int
		errs   int
	}{
		{"own threads", map[*poolEngine]map[int]bool{a: {10: true}, b: {11: true}}, 1, 0},
		{"two threads", map[*poolEngine]map[int]bool{a: {10: true, 12: true}, b: {11: true}}, 1, 1},
		{"caller's thread", map[*poolEngine]map[int]bool{a: {1: true}, b: {11: true}}, 1, 1},
		{"shared thread", map[*poolEngine]map[int]bool{a: {10: true}, b: {10: true}}, 1, 1},
	}
	for _, c := range cases {
		rec := &recorder{TB: t}
		log := threadLog[*poolEngine]{tids: c.tids}
		log.check(rec, c.caller)
		if rec.errs != c.errs {
			t.Errorf("%s: check reported %d errors, want %d", c.name, rec.errs, c.errs)
		}
	}

	// record keys by the calling thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var log threadLog[*poolEngine]
	log.record(a)
	log.record(a)
	if owner := log.check(t, -1); len(owner) != 1 || owner[threadID()] != a {
		t.Errorf("after recording a twice on this thread: owners %v", owner)
	}
}

// recorder counts the errors reported to it instead of failing the test.
type recorder struct {
	testing.TB
	errs int
}

func (r *recorder) Errorf(string, ...any) { r.errs++ }
func (r *recorder) Helper()               {}
