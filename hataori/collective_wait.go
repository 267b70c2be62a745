package hataori

import (
	"runtime"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// The control collectives of a call (the communicator duplicate, the
// preflight's and the final convergence's reductions) wait politely as
// mpi.Polite says (run-time backend only; the same choice on every rank):
// MPI_Iallreduce, MPI_Comm_idup or MPI_Ibarrier completed by MPI_Test in a
// loop paced by the coordinator's back-off (spin collectiveSpin, then
// sleep 10 µs doubling to 50 µs, with a 1 µs timer slack from the second
// sleep). A blocking collective spins inside MPI (MPICH's always, Open
// MPI's unless its launcher marked the node oversubscribed), so with more
// ranks than cores the ranks that arrive first keep the cores from the
// ranks they are waiting for: with 4 ranks on 2 cores under MPICH a
// call's start-up took 17–80 ms, against about 1 ms polite. The cgo
// backend keeps blocking collectives (MPI may not hold pointers to Go
// memory after a cgo call returns, as a nonblocking collective would).

// politeDup duplicates h: with MPI_Comm_idup and a polite wait where
// mpi.Polite allows, else after a polite barrier (so that the blocking
// MPI_Comm_dup finds every rank there) where only the reductions are
// polite, else with a blocking MPI_Comm_dup.
func politeDup(h mpi.Handle) (mpi.Handle, error) {
	reduce, dup := mpi.Polite()
	if !dup {
		if reduce {
			// Every rank arrives first, politely: the blocking duplicate
			// then finds them all there and does not spin for long.
			r, err := mpi.Ibarrier(h)
			if err == nil {
				err = waitPolite(&r)
			}
			if err != nil {
				return 0, err
			}
		}
		return mpi.Dup(h)
	}
	d := new(mpi.Handle) // heap: MPI writes it when the request completes
	r, err := mpi.Idup(h, d)
	if err == nil {
		err = waitPolite(&r)
	}
	out := *d
	runtime.KeepAlive(d)
	return out, err
}

// allreduceMin returns the elementwise minimum of in over the call's
// communicator, in one reduction.
func (k *collective) allreduceMin(in []int64) ([]int64, error) {
	out := make([]int64, len(in))
	if reduce, _ := mpi.Polite(); !reduce {
		return out, mpi.AllreduceMinInt64s(k.comm, in, out)
	}
	// in and out are on the heap (they reach MPI through unsafe
	// pointers) and stay referenced until the request has completed.
	send := append(make([]int64, 0, len(in)), in...)
	r, err := mpi.IallreduceMinInt64s(k.comm, send, out)
	if err == nil {
		err = waitPolite(&r)
	}
	runtime.KeepAlive(send)
	runtime.KeepAlive(out)
	return out, err
}

// collectiveSpin is how long waitPolite spins before it sleeps: longer
// than an idle coordinator's spinFor, since a control collective with
// every rank present completes within a few microseconds of the last
// arrival, and a wait this short costs the late ranks little.
const collectiveSpin = 100 * time.Microsecond

// waitPolite tests r until it completes, spinning briefly and then
// sleeping between tests (with a fine timer slack from the second sleep
// on: setting it costs two system calls, which a wait that ends while
// spinning should not pay).
func waitPolite(r *mpi.Request) error {
	b := backoff{spin: collectiveSpin}
	restore := func() {}
	defer func() { restore() }()
	for {
		done, err := mpi.Test(r)
		if err != nil || done {
			return err
		}
		b.wait(true, nil, nil)
		if b.d > backoffMin && b.d <= 2*backoffMin {
			restore = fineTimerSlack()
		}
	}
}
