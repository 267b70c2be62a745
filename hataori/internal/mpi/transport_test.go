package mpi_test

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/mpitest"
)

// jobTimeout bounds each multi-rank job of this package.
const jobTimeout = 60 * time.Second

// TestTransport runs every transport check in one job per rank count.
func TestTransport(t *testing.T) {
	if !mpitest.Child() {
		for _, n := range []int{1, 2, 4} {
			mpitest.Run(t, mpitest.Config{Ranks: n, Timeout: jobTimeout})
		}
		return
	}
	rank, size := mpitest.Init(t)
	t.Logf("rank %d of %d, backend %s", rank, size, mpi.Backend())
	world := mpi.World()
	checkThreads(t)
	checkDebugAssert(t)
	checkDup(t, world, rank, size)
	checkAllreduce(t, world, rank, size)
	checkNonblocking(t, world, rank, size)
	checkBcast(t, world, rank, size)
	checkProbe(t, world, rank, size)
	checkPingPong(t, world, rank, size)
	checkCounts(t, world, rank, size)
	checkErrorsReturn(t, world, rank, size)
	if err := mpi.Barrier(world); err != nil {
		t.Fatalf("Barrier: %v", err)
	}
}

// checkThreads checks the thread level and IsThreadMain on and off the
// MPI main thread.
func checkThreads(t *testing.T) {
	t.Helper()
	lvl, err := mpi.QueryThread()
	if err != nil || lvl < mpi.ThreadFunneled || lvl > mpi.ThreadMultiple {
		t.Fatalf("QueryThread = %v, %v; want FUNNELED..MULTIPLE", lvl, err)
	}
	if main, err := mpi.IsThreadMain(); err != nil || !main {
		t.Fatalf("IsThreadMain on the MPI goroutine = %v, %v; want true", main, err)
	}
	type res struct {
		main bool
		err  error
	}
	ch := make(chan res)
	go func() {
		runtime.LockOSThread() // a thread of its own, never the MPI main thread
		defer runtime.UnlockOSThread()
		m, err := mpi.IsThreadMain()
		ch <- res{m, err}
	}()
	if r := <-ch; r.err != nil || r.main {
		t.Fatalf("IsThreadMain on another locked goroutine = %v, %v; want false", r.main, r.err)
	}
}

// partner returns the rank paired with rank for point-to-point checks
// ((0,1), (2,3), ...), or -1 when rank has none. Ranks never send to
// themselves: a blocking MPI_Send to self hangs under MPICH in a job of one.
func partner(rank, size int) int {
	p := rank ^ 1
	if p >= size {
		return -1
	}
	return p
}

// checkDup duplicates and frees a communicator, and checks that the
// duplicate's messages are isolated from world's.
func checkDup(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	d, err := mpi.Dup(world)
	if err != nil {
		t.Fatalf("Dup: %v", err)
	}
	if d == world {
		t.Fatalf("Dup returned the world handle %#x", uintptr(d))
	}
	if r, err := mpi.Rank(d); err != nil || r != rank {
		t.Fatalf("Rank(dup) = %d, %v; want %d", r, err, rank)
	}
	if s, err := mpi.Size(d); err != nil || s != size {
		t.Fatalf("Size(dup) = %d, %v; want %d", s, err, size)
	}
	if p := partner(rank, size); p >= 0 {
		if rank < p {
			if err := mpi.Send(d, []byte("dup"), p, 5); err != nil {
				t.Fatalf("Send on dup: %v", err)
			}
		}
		if err := mpi.Barrier(d); err != nil {
			t.Fatalf("Barrier on dup: %v", err)
		}
		if rank > p {
			// The message was sent before the barrier: a probe on world
			// must not see it, a probe on the duplicate must.
			if ok, _, err := mpi.Iprobe(world, p, 5); err != nil || ok {
				t.Fatalf("Iprobe(world) saw a message sent on the duplicate: %v, %v", ok, err)
			}
			buf := make([]byte, 8)
			st, err := mpi.Recv(d, buf, p, 5)
			if err != nil || st != (mpi.Status{Source: p, Tag: 5, Count: 3}) || string(buf[:3]) != "dup" {
				t.Fatalf("Recv on dup = %+v %q, %v", st, buf, err)
			}
		}
	}
	old := d
	if err := mpi.Free(&d); err != nil {
		t.Fatalf("Free: %v", err)
	}
	if d == old {
		t.Fatalf("Free left the handle unchanged (%#x), want MPI_COMM_NULL", uintptr(d))
	}
}

// checkAllreduce checks signed MIN reductions over int64 vectors, with
// values within and beyond 32 bits, blocking and (where the backend offers
// it) nonblocking.
func checkAllreduce(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	// 100, 50, 0, -50, ...: the minimum is negative from 4 ranks on, and
	// an unsigned reduction would return the positive values instead.
	// MinInt32 on the last rank; values beyond 32 bits, negative on every
	// rank but rank 0; -1 on rank 0 against 2^50 elsewhere.
	ext := int64(rank + 1)
	if rank == size-1 {
		ext = math.MinInt32
	}
	v64 := int64(1) << 50
	if rank == 0 {
		v64 = -1
	}
	in := []int64{int64(100 - 50*rank), ext, -int64(rank)<<40 + 7, v64}
	want := []int64{int64(100 - 50*(size-1)), math.MinInt32, -int64(size-1)<<40 + 7, -1}
	out := make([]int64, len(in))
	if err := mpi.AllreduceMinInt64s(world, in, out); err != nil || !slices.Equal(out, want) {
		t.Fatalf("AllreduceMinInt64s(%v) = %v, %v; want %v", in, out, err, want)
	}
	if reduce, _ := mpi.Polite(); !reduce {
		return
	}
	out = make([]int64, len(in))
	r, err := mpi.IallreduceMinInt64s(world, in, out)
	for done := false; err == nil && !done; {
		done, err = mpi.Test(&r)
	}
	if err != nil || !slices.Equal(out, want) {
		t.Fatalf("IallreduceMinInt64s(%v) = %v, %v; want %v", in, out, err, want)
	}
}

// checkNonblocking checks the polite waits' other nonblocking calls where
// the backend offers them: Ibarrier, and Idup where Polite duplicates with
// it (the duplicate has the world's rank and size and is freed), each
// completed by Test, and a Test of a completed request fails instead of
// touching freed state.
func checkNonblocking(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	reduce, idup := mpi.Polite()
	if !reduce {
		return
	}
	wait := func(what string, r mpi.Request, err error) {
		t.Helper()
		for done := false; err == nil && !done; {
			done, err = mpi.Test(&r)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	r, err := mpi.Ibarrier(world)
	wait("Ibarrier", r, err)
	if mpi.Backend() == "mpicgo" {
		if _, err := mpi.Test(&r); err == nil {
			t.Errorf("Test of a completed request succeeded")
		}
	}
	if !idup {
		return
	}
	d := new(mpi.Handle)
	r, err = mpi.Idup(world, d)
	wait("Idup", r, err)
	if got, err := mpi.Rank(*d); err != nil || got != rank {
		t.Errorf("rank in the Idup duplicate = %d, %v; want %d", got, err, rank)
	}
	if got, err := mpi.Size(*d); err != nil || got != size {
		t.Errorf("size of the Idup duplicate = %d, %v; want %d", got, err, size)
	}
	if err := mpi.Free(d); err != nil {
		t.Errorf("Free of the Idup duplicate: %v", err)
	}
}

// pattern returns n bytes derived from seed.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*7)
	}
	return b
}

// checkBcast broadcasts from the last rank, then an empty buffer.
func checkBcast(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	root := size - 1
	want := pattern(root, 1000)
	buf := make([]byte, len(want))
	if rank == root {
		copy(buf, want)
	}
	if err := mpi.Bcast(world, buf, root); err != nil {
		t.Fatalf("Bcast: %v", err)
	}
	if !bytes.Equal(buf, want) {
		t.Fatalf("Bcast delivered wrong bytes")
	}
	if err := mpi.Bcast(world, nil, 0); err != nil {
		t.Fatalf("Bcast of an empty buffer: %v", err)
	}
}

// checkProbe sends one message each way between partners, the receiver
// checking Iprobe before and after the send, Probe, Recv with wildcards and
// the statuses; then an empty message.
func checkProbe(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	p := partner(rank, size)
	for phase := 0; phase < 2; phase++ {
		sending := p >= 0 && rank%2 == phase
		receiving := p >= 0 && !sending
		tag := 100 + phase
		if receiving {
			if ok, _, err := mpi.Iprobe(world, mpi.AnySource(), mpi.AnyTag()); err != nil || ok {
				t.Fatalf("Iprobe before the send = %v, %v; want false", ok, err)
			}
		}
		if err := mpi.Barrier(world); err != nil { // nobody sends before the Iprobe above
			t.Fatalf("Barrier: %v", err)
		}
		if sending {
			if err := mpi.Send(world, pattern(rank, 3*rank+1), p, tag); err != nil {
				t.Fatalf("Send: %v", err)
			}
		}
		if receiving {
			want := mpi.Status{Source: p, Tag: tag, Count: 3*p + 1}
			var st mpi.Status
			for {
				ok, s, err := mpi.Iprobe(world, mpi.AnySource(), mpi.AnyTag())
				if err != nil {
					t.Fatalf("Iprobe: %v", err)
				}
				if ok {
					st = s
					break
				}
				time.Sleep(time.Millisecond) // the job's timeout bounds this loop
			}
			if st != want {
				t.Fatalf("Iprobe status = %+v, want %+v", st, want)
			}
			if st, err := mpi.Probe(world, p, mpi.AnyTag()); err != nil || st != want {
				t.Fatalf("Probe = %+v, %v; want %+v", st, err, want)
			}
			buf := make([]byte, want.Count+64) // larger than the message: Count is the message size
			st, err := mpi.Recv(world, buf, mpi.AnySource(), mpi.AnyTag())
			if err != nil || st != want {
				t.Fatalf("Recv = %+v, %v; want %+v", st, err, want)
			}
			if !bytes.Equal(buf[:st.Count], pattern(p, want.Count)) {
				t.Fatalf("Recv delivered wrong bytes")
			}
		}
	}
	if p < 0 {
		return
	}
	// An empty message: even ranks send, odd ranks receive into a nil buffer.
	if rank%2 == 0 {
		if err := mpi.Send(world, nil, p, 9); err != nil {
			t.Fatalf("Send of an empty buffer: %v", err)
		}
	} else if st, err := mpi.Recv(world, nil, p, 9); err != nil || st != (mpi.Status{Source: p, Tag: 9}) {
		t.Fatalf("Recv of an empty message = %+v, %v", st, err)
	}
}

// checkPingPong bounces messages of several sizes between partners.
func checkPingPong(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	peer := partner(rank, size)
	if peer < 0 {
		return
	}
	for i, n := range []int{0, 1, 8, 1024, 1 << 20} {
		msg := pattern(i, n)
		buf := make([]byte, n)
		tag := 20 + i
		if rank%2 == 0 {
			if err := mpi.Send(world, msg, peer, tag); err != nil {
				t.Fatalf("ping %d: %v", n, err)
			}
			st, err := mpi.Recv(world, buf, peer, tag+1)
			if err != nil || st != (mpi.Status{Source: peer, Tag: tag + 1, Count: n}) || !bytes.Equal(buf, msg) {
				t.Fatalf("pong %d bytes: %+v, %v", n, st, err)
			}
			continue
		}
		st, err := mpi.Recv(world, buf, peer, tag)
		if err != nil || st != (mpi.Status{Source: peer, Tag: tag, Count: n}) || !bytes.Equal(buf, msg) {
			t.Fatalf("ping %d bytes: %+v, %v", n, st, err)
		}
		if err := mpi.Send(world, buf, peer, tag+1); err != nil {
			t.Fatalf("pong %d: %v", n, err)
		}
	}
}

// checkCounts exchanges messages of many sizes between partners, enough for
// the run-time backend to verify and then use its decoding of counts from
// the native status, and checks every reported count.
func checkCounts(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	peer := partner(rank, size)
	if peer < 0 {
		return
	}
	buf := make([]byte, 5000)
	for i := 0; i < 40; i++ {
		n := (i * 397) % len(buf) // 0, 397, 794, ...: every size differs
		if rank%2 == 0 {
			if err := mpi.Send(world, buf[:n], peer, 30); err != nil {
				t.Fatalf("Send %d: %v", n, err)
			}
			continue
		}
		st, err := mpi.Probe(world, peer, 30)
		if err != nil || st.Count != n {
			t.Fatalf("Probe of %d bytes = %+v, %v", n, st, err)
		}
		if st, err = mpi.Recv(world, buf, peer, 30); err != nil || st.Count != n {
			t.Fatalf("Recv of %d bytes = %+v, %v", n, st, err)
		}
	}
	if rank%2 == 1 && !mpi.CountDecoded() {
		t.Errorf("backend %s never trusted its count decoding for this MPI", mpi.Backend())
	}
}

// checkErrorsReturn: on a duplicate with MPI_ERRORS_RETURN, a send to an
// invalid rank and a truncated receive return an *mpi.Error carrying MPI's
// own error string, and the job goes on.
func checkErrorsReturn(t *testing.T, world mpi.Handle, rank, size int) {
	t.Helper()
	d, err := mpi.Dup(world)
	if err != nil {
		t.Fatalf("Dup: %v", err)
	}
	if err := mpi.SetErrorsReturn(d); err != nil {
		t.Fatalf("SetErrorsReturn: %v", err)
	}
	isMPIError := func(label string, err error, fn string) {
		t.Helper()
		var e *mpi.Error
		if !errors.As(err, &e) || e.Func != fn || e.Code == 0 || e.Code == mpi.CodeNotMPI || e.Msg == "" {
			t.Errorf("%s = %#v, want an *mpi.Error of %s with MPI's message", label, err, fn)
			return
		}
		t.Logf("%s: %v", label, err)
	}
	isMPIError("Send to rank size", mpi.Send(d, []byte("x"), size, 3), "MPI_Send")
	if p := partner(rank, size); p >= 0 {
		if rank < p {
			if err := mpi.Send(d, make([]byte, 16), p, 4); err != nil {
				t.Fatalf("Send of 16 bytes: %v", err)
			}
		} else {
			_, err := mpi.Recv(d, make([]byte, 8), p, 4)
			isMPIError("Recv of 16 bytes into 8", err, "MPI_Recv")
		}
	}
	if err := mpi.Barrier(d); err != nil {
		t.Fatalf("Barrier after the errors: %v", err)
	}
	if err := mpi.Free(&d); err != nil {
		t.Fatalf("Free: %v", err)
	}
}
