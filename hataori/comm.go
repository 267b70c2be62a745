package hataori

import (
	"errors"
	"sync/atomic"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// Comm is an MPI communicator for Hataori's collective calls ([Pmap],
// [Broadcast], [Scatter], [Gather]) and for the caller's own messages. A Comm
// comes from [World], from Dup, or from [CommFromHandle] (a handle owned by
// someone else, such as mpi4py). The same program compiles unchanged under
// the build tags mpirt and mpicgo; without either, every MPI operation
// returns [ErrNoMPI].
//
// Hataori's collective calls never send on the caller's communicator
// itself: each call works on a private duplicate, so the caller's own
// messages on the same Comm cannot be confused with Hataori's. For World
// and for a Comm from Dup the duplicate is kept from one call to the next
// (a call that ended in a wire or protocol fault frees it, and the next
// call makes a new one), so that a loop of calls does not pay an
// MPI_Comm_dup each; Free and [Finalize] free it. Dup makes it at once,
// and so does [InitThread] for World when it initialises MPI, so that not
// even the first call pays it (elsewhere the first call makes it). A Comm from
// [CommFromHandle] gets a new duplicate per call, freed at its end: its
// owner may free the handle with MPI itself, and MPI may then hand the
// same handle value to another communicator.
//
// Every method that calls MPI must run on the MPI main thread: the
// goroutine that initialised MPI, locked to its OS thread (see [InitThread]).
// The zero Comm is invalid: its methods return [ErrInvalidComm].
//
// A Comm is a small value, cheap to copy and to pass by value. Copies of a
// Comm from Dup share its state: once Free has released it through any
// copy, every copy is invalid and its methods, and the collective calls on
// it, return ErrInvalidComm without calling MPI.
//
// # Errors
//
// An MPI failure in a method is returned as an *[MPIError] carrying MPI's
// own error string (a receive into a buffer too small for the message, a
// send to a rank outside the communicator) on the communicators whose
// error handler Hataori sets to MPI_ERRORS_RETURN: World when InitThread
// initialised MPI, and every communicator from Dup. Hataori never changes
// the error handler of a communicator it does not own: MPI_COMM_WORLD when
// someone else initialised MPI, and a handle from CommFromHandle keep
// theirs, which by MPI's default (MPI_ERRORS_ARE_FATAL) aborts the job on
// an error; call Dup on them to get a communicator whose errors are
// returned. Hataori's collective calls always work on a private duplicate
// with MPI_ERRORS_RETURN, whatever the caller's communicator does.
type Comm struct {
	h    mpi.Handle
	kind commKind
	// dup is the state every copy of a Comm from Dup shares (nil for the
	// other kinds, which Hataori never frees).
	dup *dupState
}

// dupState is shared by the copies of one communicator from Dup.
type dupState struct {
	// freed is set by Free once MPI_Comm_free succeeded. It is written
	// only on the MPI main thread; it is atomic so that Handle, which
	// calls no MPI, may be read from any goroutine.
	freed atomic.Bool
	// priv is the private duplicate the collective calls on this
	// communicator keep between calls (MPI main thread only).
	priv coll.Kept
}

// worldPriv is the private duplicate of MPI_COMM_WORLD that the collective
// calls on World keep between calls (MPI main thread only).
var worldPriv coll.Kept

// kept returns the slot in which the collective calls on c keep their
// private duplicate: World's, a Dup'ed Comm's own (shared by its copies),
// nil for a borrowed handle (a duplicate per call).
func (c Comm) kept() *coll.Kept {
	switch c.kind {
	case commWorld:
		return &worldPriv
	case commDup:
		return &c.dup.priv
	}
	return nil
}

// commKind says where a Comm came from, which decides whether Free may
// release it.
type commKind uint8

const (
	commInvalid  commKind = iota // the zero Comm
	commWorld                    // MPI_COMM_WORLD: never freed
	commBorrowed                 // CommFromHandle: owned by the caller
	commDup                      // Dup: owned by the caller, freed with Free
)

// AnySource and AnyTag are wildcards for Comm.Recv; Hataori maps them to
// the MPI library's own values.
const (
	AnySource = -1
	AnyTag    = -1
)

// Backend names the MPI backend compiled into the program: "mpirt"
// (run-time MPIABI library), "mpicgo" (cgo, system MPI) or "none".
func Backend() string { return mpi.Backend() }

// World returns the communicator of every process of the job
// (MPI_COMM_WORLD). MPI must be initialised: World returns
// [ErrNotInitialized] otherwise ([ErrNoMPI] without an MPI backend; under
// mpirt also the library's load error). Its MPI errors are returned as
// *[MPIError] when [InitThread] initialised MPI (which sets MPI_ERRORS_RETURN
// on it); when another library initialised MPI, World keeps that library's
// error handler (see [Comm]).
func World() (Comm, error) {
	ok, err := mpi.Initialized()
	if err != nil {
		return Comm{}, mpiErr(err)
	}
	if !ok {
		return Comm{}, ErrNotInitialized
	}
	if done, err := mpi.Finalized(); err != nil || done {
		return Comm{}, errors.Join(ErrNotInitialized, errors.New("hataori: MPI is already finalised"), mpiErr(err))
	}
	return Comm{h: mpi.World(), kind: commWorld}, nil
}

// CommFromHandle wraps a communicator handle created by another library in
// the same process and the same MPI, for example the integer mpi4py gives
// for a communicator (MPI._handleof(comm) in mpi4py 3, comm.handle in
// mpi4py 4). The handle stays the caller's: Hataori never frees it and
// never changes its error handler, so with MPI's default handler an MPI
// error in one of its methods aborts the job; Dup it for a communicator of
// Hataori's own, whose errors are returned as *[MPIError]. The collective
// calls on it ([Pmap], [Broadcast], …) work on a private duplicate whose
// errors are returned either way.
func CommFromHandle(h uintptr) Comm {
	return Comm{h: mpi.Handle(h), kind: commBorrowed}
}

// Handle returns the communicator's MPI handle as an integer, valid for
// other libraries sharing the same MPI in this process (0 for the zero
// [Comm] and for a freed one). It calls no MPI.
func (c Comm) Handle() uintptr {
	if c.freed() {
		return 0
	}
	return uintptr(c.h)
}

// freed reports whether c came from Dup and was freed, through any copy.
func (c Comm) freed() bool { return c.dup != nil && c.dup.freed.Load() }

// handle returns c's transport handle, or why c cannot be used: ErrNoMPI
// without a backend, ErrInvalidComm for the zero Comm and for a freed one.
// It calls no MPI.
func (c Comm) handle() (mpi.Handle, error) {
	if mpi.Backend() == "none" {
		return 0, ErrNoMPI
	}
	if c.kind == commInvalid || c.freed() {
		return 0, ErrInvalidComm
	}
	return c.h, nil
}

// Dup returns a new communicator with the same processes (MPI_Comm_dup, a
// collective call), with MPI_ERRORS_RETURN set: an MPI error in its methods
// is returned as *[MPIError] instead of aborting the job. It also makes the
// new communicator's private duplicate for the collective calls (a second
// MPI_Comm_dup; see [Comm]). Release it with Free.
func (c Comm) Dup() (Comm, error) {
	h, err := c.handle()
	if err != nil {
		return Comm{}, err
	}
	d, err := mpi.Dup(h)
	if err != nil {
		return Comm{}, mpiErr(err)
	}
	if err := mpi.SetErrorsReturn(d); err != nil {
		_ = mpi.Free(&d)
		return Comm{}, mpiErr(err)
	}
	out := Comm{h: d, kind: commDup, dup: new(dupState)}
	// Its private duplicate now (Dup is collective anyway), rather than in
	// the first collective call on it.
	if err := coll.Prime(d, &out.dup.priv); err != nil {
		_ = mpi.Free(&d)
		return Comm{}, mpiErr(err)
	}
	return out, nil
}

// Free releases a communicator created by Dup (MPI_Comm_free, a collective
// call), and first the private duplicate the collective calls on it kept
// (see [Comm]), and makes c and every copy of it invalid: their methods, a
// second Free included, and the collective calls on them return
// [ErrInvalidComm] without calling MPI. It returns [ErrNotFreeable] for the
// world communicator and for one from [CommFromHandle]. If MPI_Comm_free
// fails (an *[MPIError]), c stays valid.
func (c Comm) Free() error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	if c.kind != commDup {
		return ErrNotFreeable
	}
	// The kept duplicate first (every rank's holds the same, so every rank
	// frees alike), then the parent; the slot retires only once the parent
	// is gone, and a call still holding the duplicate (Free from a callback
	// run on the coordinator) then frees it at its end.
	if err := c.dup.priv.Free(false); err != nil {
		return mpiErr(err)
	}
	if err := mpi.Free(&h); err != nil {
		return mpiErr(err)
	}
	_ = c.dup.priv.Free(true) // holds nothing now: no MPI call
	c.dup.freed.Store(true)
	return nil
}

// Rank returns the rank of the calling process in c.
func (c Comm) Rank() (int, error) {
	h, err := c.handle()
	if err != nil {
		return 0, err
	}
	r, err := mpi.Rank(h)
	return r, mpiErr(err)
}

// Size returns the number of processes in c.
func (c Comm) Size() (int, error) {
	h, err := c.handle()
	if err != nil {
		return 0, err
	}
	s, err := mpi.Size(h)
	return s, mpiErr(err)
}

// Barrier blocks until every process of c has called it.
func (c Comm) Barrier() error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	return mpiErr(mpi.Barrier(h))
}

// Send sends buf to rank dest with tag (a blocking MPI_Send of bytes).
func (c Comm) Send(buf []byte, dest, tag int) error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	return mpiErr(mpi.Send(h, buf, dest, tag))
}

// Recv receives a message from rank src (or [AnySource]) with tag (or
// [AnyTag]) into buf and returns its length. buf must be large enough for the
// message: a longer message is an *[MPIError] (MPI_ERR_TRUNCATE), and is
// consumed.
func (c Comm) Recv(buf []byte, src, tag int) (n int, err error) {
	h, err := c.handle()
	if err != nil {
		return 0, err
	}
	if src == AnySource {
		src = mpi.AnySource()
	}
	if tag == AnyTag {
		tag = mpi.AnyTag()
	}
	st, err := mpi.Recv(h, buf, src, tag)
	return st.Count, mpiErr(err)
}
