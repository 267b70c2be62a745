package coll

import (
	"runtime"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// The control collectives of a call (the communicator duplicate, the
// preflight's and the final convergence's reductions) wait politely as
// mpi.Polite says (both backends; the same choice on every rank):
// MPI_Iallreduce, MPI_Comm_idup or MPI_Ibarrier completed by MPI_Test in a
// loop paced by the coordinator's back-off (spin collectiveSpin, then
// sleep 10 µs doubling to 50 µs, with the call's 1 µs timer slack). A
// blocking collective spins inside MPI (MPICH's always, Open MPI's unless
// its launcher marked the node oversubscribed), so with more
// ranks than cores the ranks that arrive first keep the cores from the
// ranks they are waiting for: with 4 ranks on 2 cores under MPICH a
// call's start-up took 17–80 ms, against about 1 ms polite. The cgo
// backend keeps the buffers of its nonblocking collectives in C memory (MPI
// may not hold pointers to Go memory after a cgo call returns).

// politeDup duplicates h: with MPI_Comm_idup and a polite wait where
// mpi.Polite allows, else after a polite barrier (so that the blocking
// MPI_Comm_dup finds every rank there) where only the reductions are
// polite, else with a blocking MPI_Comm_dup.
func politeDup(h mpi.Handle) (mpi.Handle, error) {
	reduce, idup := mpi.Polite()
	if idup {
		d := new(mpi.Handle) // heap: MPI writes it when the request completes
		err := WaitPolite(mpi.Idup(h, d))
		out := *d
		runtime.KeepAlive(d)
		return out, err
	}
	if reduce {
		if err := WaitPolite(mpi.Ibarrier(h)); err != nil {
			return 0, err
		}
	}
	return mpi.Dup(h)
}

// AllreduceMin returns the elementwise minimum of in over the call's
// communicator, in one reduction. in reaches MPI through an unsafe pointer,
// so it lives on the heap; it and the result stay referenced until the
// request has completed.
func (k *Coll) AllreduceMin(in []int64) ([]int64, error) {
	out := make([]int64, len(in))
	if reduce, _ := mpi.Polite(); !reduce {
		return out, mpi.AllreduceMinInt64s(k.Comm, in, out)
	}
	err := WaitPolite(mpi.IallreduceMinInt64s(k.Comm, in, out))
	runtime.KeepAlive(in)
	runtime.KeepAlive(out)
	return out, err
}

// collectiveSpin is how long WaitPolite spins before it sleeps: longer
// than an idle coordinator's SpinFor, since a control collective with
// every rank present completes within a few microseconds of the last
// arrival, and a wait this short costs the late ranks little.
const collectiveSpin = 100 * time.Microsecond

// WaitPolite tests the request r that a nonblocking call just started
// (err: the call's error, returned as is) until it completes, spinning
// briefly and then sleeping between tests. The collective call set a fine
// timer slack for its whole duration (hataori's enterCollective). While the call's
// entry bound runs (the duplicate and the preflight reduction), a wait that
// outlasts it aborts the job (checkEntry).
func WaitPolite(r mpi.Request, err error) error {
	if err != nil {
		return err
	}
	b := Backoff{spin: collectiveSpin}
	for {
		done, err := mpi.Test(&r)
		if err != nil || done {
			return err
		}
		b.Wait(true, nil, nil)
		if !entry.deadline.IsZero() {
			checkEntry(time.Now())
		}
	}
}
