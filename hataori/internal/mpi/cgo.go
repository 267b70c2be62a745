//go:build mpicgo && !mpirt

package mpi

/*
#cgo noescape hataori_send
#cgo nocallback hataori_send
#cgo noescape hataori_recv
#cgo nocallback hataori_recv
#cgo noescape hataori_probe
#cgo nocallback hataori_probe
#cgo noescape hataori_iprobe
#cgo nocallback hataori_iprobe
#cgo noescape hataori_bcast
#cgo nocallback hataori_bcast
#cgo noescape hataori_allreduce_min_i64s
#cgo nocallback hataori_allreduce_min_i64s
#include "cgo_helpers.h"
*/
import "C"

import (
	"errors"
	"os"
	"runtime"
	"time"
	"unsafe"
)

// zero gives empty buffers a valid, non-nil address.
var zero [1]byte

// bufPtr returns a valid address for buf (never nil) and its length.
func bufPtr(fn string, buf []byte) (unsafe.Pointer, C.int, error) {
	if len(buf) > maxCount {
		return nil, 0, countErr(fn, len(buf))
	}
	if len(buf) == 0 {
		return unsafe.Pointer(&zero[0]), 0, nil
	}
	return unsafe.Pointer(&buf[0]), C.int(len(buf)), nil
}

// check turns an MPI return code into an *Error.
func check(fn string, rc C.int) error {
	if rc == C.MPI_SUCCESS {
		return nil
	}
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	var n C.int
	msg := ""
	if C.MPI_Error_string(rc, &buf[0], &n) == C.MPI_SUCCESS && n > 0 {
		msg = C.GoStringN(&buf[0], n)
	}
	return &Error{Func: fn, Code: int(rc), Msg: msg}
}

// Backend names the backend compiled in: "mpicgo".
func Backend() string { return "mpicgo" }

// LinkedMPI names the MPI the binary is linked against: "openmpi" or
// "mpich" (or "unknown").
func LinkedMPI() string { return C.GoString(C.hataori_linked_mpi()) }

// Load does nothing under mpicgo: the library is linked.
func Load() error { return nil }

// InitThread initialises MPI with the required thread level and returns
// the level provided.
func InitThread(required ThreadLevel) (ThreadLevel, error) {
	if required < ThreadSingle || required > ThreadMultiple {
		return ThreadSingle, levelErr(required)
	}
	var provided C.int
	if err := check("MPI_Init_thread", C.hataori_init_thread(C.int(required), &provided)); err != nil {
		return ThreadSingle, err
	}
	recordInitThread()
	return ThreadLevel(provided), nil
}

// Initialized reports whether MPI has been initialised.
func Initialized() (bool, error) {
	var f C.int
	err := check("MPI_Initialized", C.MPI_Initialized(&f))
	return f != 0, err
}

// Finalized reports whether MPI has been finalised.
func Finalized() (bool, error) {
	var f C.int
	err := check("MPI_Finalized", C.MPI_Finalized(&f))
	return f != 0, err
}

// Finalize finalises MPI.
func Finalize() error {
	assertMain("MPI_Finalize")
	return check("MPI_Finalize", C.MPI_Finalize())
}

// QueryThread returns the thread level MPI provides.
func QueryThread() (ThreadLevel, error) {
	assertMain("MPI_Query_thread")
	var l C.int
	err := check("MPI_Query_thread", C.hataori_query_thread(&l))
	return ThreadLevel(l), err
}

// IsThreadMain reports whether the calling OS thread is the MPI main
// thread. It may be called from any thread.
func IsThreadMain() (bool, error) {
	var f C.int
	err := check("MPI_Is_thread_main", C.MPI_Is_thread_main(&f))
	return f != 0, err
}

// World returns MPI_COMM_WORLD.
func World() Handle { return Handle(C.hataori_comm_world()) }

// Dup duplicates c.
func Dup(c Handle) (Handle, error) {
	assertMain("MPI_Comm_dup")
	var out C.uintptr_t
	if err := check("MPI_Comm_dup", C.hataori_comm_dup(C.uintptr_t(c), &out)); err != nil {
		return 0, err
	}
	return Handle(out), nil
}

// SetErrorsReturn sets MPI_ERRORS_RETURN on c (MPI_Comm_set_errhandler),
// so that an MPI error in a later call on c is returned as an *Error with
// MPI's error string instead of aborting the job.
func SetErrorsReturn(c Handle) error {
	assertMain("MPI_Comm_set_errhandler")
	return check("MPI_Comm_set_errhandler", C.hataori_comm_set_errors_return(C.uintptr_t(c)))
}

// Free frees *c and sets it to MPI_COMM_NULL.
func Free(c *Handle) error {
	assertMain("MPI_Comm_free")
	h := C.uintptr_t(*c)
	err := check("MPI_Comm_free", C.hataori_comm_free(&h))
	*c = Handle(h)
	return err
}

// Rank returns the rank of the caller in c.
func Rank(c Handle) (int, error) {
	assertMain("MPI_Comm_rank")
	var r C.int
	err := check("MPI_Comm_rank", C.hataori_comm_rank(C.uintptr_t(c), &r))
	return int(r), err
}

// Size returns the number of processes in c.
func Size(c Handle) (int, error) {
	assertMain("MPI_Comm_size")
	var s C.int
	err := check("MPI_Comm_size", C.hataori_comm_size(C.uintptr_t(c), &s))
	return int(s), err
}

// Send sends buf as MPI_BYTEs to dest with tag (blocking standard mode).
func Send(c Handle, buf []byte, dest, tag int) error {
	assertMain("MPI_Send")
	p, n, err := bufPtr("MPI_Send", buf)
	if err != nil {
		return err
	}
	return check("MPI_Send", C.hataori_send(p, n, C.int(dest), C.int(tag), C.uintptr_t(c)))
}

// Recv receives into buf from src with tag (AnySource / AnyTag allowed).
func Recv(c Handle, buf []byte, src, tag int) (Status, error) {
	assertMain("MPI_Recv")
	p, n, err := bufPtr("MPI_Recv", buf)
	if err != nil {
		return Status{}, err
	}
	var out [3]C.int
	if err := check("MPI_Recv", C.hataori_recv(p, n, C.int(src), C.int(tag), C.uintptr_t(c), &out[0])); err != nil {
		return Status{}, err
	}
	return Status{Source: int(out[0]), Tag: int(out[1]), Count: int(out[2])}, nil
}

// Probe blocks until a message from src with tag can be received and
// describes it.
func Probe(c Handle, src, tag int) (Status, error) {
	assertMain("MPI_Probe")
	var out [3]C.int
	if err := check("MPI_Probe", C.hataori_probe(C.int(src), C.int(tag), C.uintptr_t(c), &out[0])); err != nil {
		return Status{}, err
	}
	return Status{Source: int(out[0]), Tag: int(out[1]), Count: int(out[2])}, nil
}

// Iprobe reports whether a message from src with tag can be received, and
// describes it if so.
func Iprobe(c Handle, src, tag int) (bool, Status, error) {
	assertMain("MPI_Iprobe")
	var out [4]C.int
	if err := check("MPI_Iprobe", C.hataori_iprobe(C.int(src), C.int(tag), C.uintptr_t(c), &out[0])); err != nil {
		return false, Status{}, err
	}
	if out[3] == 0 {
		return false, Status{}, nil
	}
	return true, Status{Source: int(out[0]), Tag: int(out[1]), Count: int(out[2])}, nil
}

// AnySource returns MPI_ANY_SOURCE.
func AnySource() int { return int(C.hataori_any_source()) }

// AnyTag returns MPI_ANY_TAG.
func AnyTag() int { return int(C.hataori_any_tag()) }

// AllreduceMinInt64s sets out[i] to the minimum of in[i] over c, in one
// MPI_Allreduce; in and out have the same, non-zero length.
func AllreduceMinInt64s(c Handle, in, out []int64) error {
	assertMain("MPI_Allreduce")
	if len(in) != len(out) || len(in) == 0 {
		return errors.New("MPI_Allreduce: input and output lengths differ or are zero")
	}
	return check("MPI_Allreduce", C.hataori_allreduce_min_i64s((*C.int64_t)(unsafe.Pointer(&in[0])), (*C.int64_t)(unsafe.Pointer(&out[0])), C.int(len(in)), C.uintptr_t(c)))
}

// Bcast broadcasts buf from root to every process of c; every process
// passes a buffer of the same length.
func Bcast(c Handle, buf []byte, root int) error {
	assertMain("MPI_Bcast")
	p, n, err := bufPtr("MPI_Bcast", buf)
	if err != nil {
		return err
	}
	return check("MPI_Bcast", C.hataori_bcast(p, n, C.int(root), C.uintptr_t(c)))
}

// Barrier blocks until every process of c has entered it.
func Barrier(c Handle) error {
	assertMain("MPI_Barrier")
	return check("MPI_Barrier", C.hataori_barrier(C.uintptr_t(c)))
}

// Abort aborts every process of c with code, after a short pause
// (abortGrace) that lets the launcher forward what the process printed last.
// It does not return: if MPI_Abort returns, the process exits with code.
func Abort(c Handle, code int) {
	time.Sleep(abortGrace)
	C.hataori_abort(C.uintptr_t(c), C.int(code))
	os.Exit(code)
}

// CheckLauncher fails when the launcher announced a world size different
// from the size of c (a binary started by another MPI's launcher comes up
// as singletons).
func CheckLauncher(c Handle) error {
	size, err := Size(c)
	if err != nil {
		return err
	}
	return checkLauncher(size, LinkedMPI())
}

// Polite reports how the collective calls wait for other ranks, as the
// run-time backend does (see its Polite): reduce is always true (the
// control reductions are MPI_Iallreduce completed by Test in a paced
// loop), dup is true unless the binary is linked against Open MPI, whose
// MPI_Comm_idup needs many progress rounds (the calls then duplicate with
// a paced Ibarrier followed by a blocking MPI_Comm_dup). The answer depends
// only on the linked MPI, so every rank of a job chooses alike. The
// buffers of a nonblocking call live in C memory (see pendingOp), never
// in Go memory, which MPI may not keep after a cgo call returns.
func Polite() (reduce, dup bool) { return true, LinkedMPI() != "openmpi" }

// pendingOp is a started nonblocking control collective: its C state
// (request and buffers) and where Test delivers the result on completion.
type pendingOp struct {
	op     *C.hataori_op
	out    []int64        // IallreduceMinInt64s: receives the minimum
	newDup *Handle        // Idup: receives the duplicate
	pin    runtime.Pinner // Isend: pins the Go buffer MPI reads until completion
}

// pending maps a Request (the address of its C state) to its pendingOp.
// Only the MPI main thread starts and tests requests (assertMain), so the
// map needs no lock.
var pending = map[Request]*pendingOp{}

// start records op under its address when rc is MPI_SUCCESS, and frees it
// otherwise.
func start(fn string, p *pendingOp, rc C.int) (Request, error) {
	if err := check(fn, rc); err != nil {
		C.hataori_op_free(p.op)
		return 0, err
	}
	r := Request(uintptr(unsafe.Pointer(p.op)))
	pending[r] = p
	return r, nil
}

// newOp allocates the C state of a nonblocking call with n int64s each way.
func newOp(fn string, n int) (*C.hataori_op, error) {
	op := C.hataori_op_new(C.int(n))
	if op == nil {
		return nil, &Error{Func: fn, Code: CodeNotMPI, Msg: "out of C memory for the request"}
	}
	return op, nil
}

// Ibarrier starts a barrier on c; complete it with Test.
func Ibarrier(c Handle) (Request, error) {
	assertMain("MPI_Ibarrier")
	op, err := newOp("MPI_Ibarrier", 0)
	if err != nil {
		return 0, err
	}
	return start("MPI_Ibarrier", &pendingOp{op: op}, C.hataori_op_ibarrier(op, C.uintptr_t(c)))
}

// IallreduceMinInt64s starts setting out[i] to the minimum of in[i] over
// c; complete it with Test, which writes out. in is copied at once; out
// must stay referenced until Test reports completion. in and out have the
// same, non-zero length.
func IallreduceMinInt64s(c Handle, in, out []int64) (Request, error) {
	assertMain("MPI_Iallreduce")
	if len(in) != len(out) || len(in) == 0 {
		return 0, errors.New("MPI_Iallreduce: input and output lengths differ or are zero")
	}
	op, err := newOp("MPI_Iallreduce", len(in))
	if err != nil {
		return 0, err
	}
	copy(unsafe.Slice((*int64)(unsafe.Pointer(C.hataori_op_in(op))), len(in)), in)
	return start("MPI_Iallreduce", &pendingOp{op: op, out: out}, C.hataori_op_iallreduce_min(op, C.uintptr_t(c)))
}

// Idup starts duplicating c; Test writes the duplicate into *out on
// completion.
func Idup(c Handle, out *Handle) (Request, error) {
	assertMain("MPI_Comm_idup")
	op, err := newOp("MPI_Comm_idup", 0)
	if err != nil {
		return 0, err
	}
	return start("MPI_Comm_idup", &pendingOp{op: op, newDup: out}, C.hataori_op_idup(op, C.uintptr_t(c)))
}

// Isend starts sending buf to dest with tag; complete it with Test. buf is
// Go memory: it is pinned (runtime.Pinner, which lets C keep the pointer)
// until Test reports completion, and the caller must not modify it before.
func Isend(c Handle, buf []byte, dest, tag int) (Request, error) {
	assertMain("MPI_Isend")
	p, n, err := bufPtr("MPI_Isend", buf)
	if err != nil {
		return 0, err
	}
	op, err := newOp("MPI_Isend", 0)
	if err != nil {
		return 0, err
	}
	po := &pendingOp{op: op}
	po.pin.Pin(p)
	r, err := start("MPI_Isend", po, C.hataori_op_isend(op, p, n, C.int(dest), C.int(tag), C.uintptr_t(c)))
	if err != nil {
		po.pin.Unpin()
	}
	return r, err
}

// Test reports whether *r has completed, driving MPI's progress; on
// completion it delivers the result (the reduction's minimum, the
// duplicate), frees the request's C state and sets *r to 0.
func Test(r *Request) (bool, error) {
	assertMain("MPI_Test")
	p := pending[*r]
	if p == nil {
		return false, &Error{Func: "MPI_Test", Code: CodeNotMPI, Msg: "unknown or completed request"}
	}
	var done C.int
	if err := check("MPI_Test", C.hataori_op_test(p.op, &done)); err != nil {
		return false, err
	}
	if done == 0 {
		return false, nil
	}
	if p.out != nil {
		copy(p.out, unsafe.Slice((*int64)(unsafe.Pointer(C.hataori_op_out(p.op))), len(p.out)))
	}
	if p.newDup != nil {
		*p.newDup = Handle(C.hataori_op_comm(p.op))
	}
	p.pin.Unpin()
	delete(pending, *r)
	C.hataori_op_free(p.op)
	*r = 0
	return true, nil
}
