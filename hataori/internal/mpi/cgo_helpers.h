// C helpers of the mpicgo backend (included by cgo.go only).
//
// Handles cross the boundary as uintptr_t: a plain C cast converts an Open
// MPI handle (a pointer) or an MPICH handle (an int) both ways, so the Go
// side is the same for both MPIs. Thread levels cross as 0..3.
#ifndef HATAORI_CGO_HELPERS_H
#define HATAORI_CGO_HELPERS_H

#include <mpi.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

#define HATAORI_COMM(h) ((MPI_Comm)(h))

static const char *hataori_linked_mpi(void) {
#if defined(OPEN_MPI)
	return "openmpi";
#elif defined(MPICH_VERSION) || defined(MPICH)
	return "mpich";
#else
	return "unknown";
#endif
}

static int hataori_level_to_native(int l) {
	switch (l) {
	case 1: return MPI_THREAD_FUNNELED;
	case 2: return MPI_THREAD_SERIALIZED;
	case 3: return MPI_THREAD_MULTIPLE;
	default: return MPI_THREAD_SINGLE;
	}
}

static int hataori_level_from_native(int l) {
	if (l == MPI_THREAD_MULTIPLE) return 3;
	if (l == MPI_THREAD_SERIALIZED) return 2;
	if (l == MPI_THREAD_FUNNELED) return 1;
	return 0;
}

static int hataori_init_thread(int required, int *provided) {
	int p = MPI_THREAD_SINGLE;
	int rc = MPI_Init_thread(NULL, NULL, hataori_level_to_native(required), &p);
	*provided = hataori_level_from_native(p);
	return rc;
}

static int hataori_query_thread(int *level) {
	int p = MPI_THREAD_SINGLE;
	int rc = MPI_Query_thread(&p);
	*level = hataori_level_from_native(p);
	return rc;
}

static uintptr_t hataori_comm_world(void) { return (uintptr_t)MPI_COMM_WORLD; }
static int hataori_any_source(void) { return MPI_ANY_SOURCE; }
static int hataori_any_tag(void) { return MPI_ANY_TAG; }

static int hataori_comm_dup(uintptr_t c, uintptr_t *out) {
	MPI_Comm n = MPI_COMM_NULL;
	int rc = MPI_Comm_dup(HATAORI_COMM(c), &n);
	*out = (uintptr_t)n;
	return rc;
}

static int hataori_comm_free(uintptr_t *c) {
	MPI_Comm n = HATAORI_COMM(*c);
	int rc = MPI_Comm_free(&n);
	*c = (uintptr_t)n;
	return rc;
}

static int hataori_comm_set_errors_return(uintptr_t c) {
	return MPI_Comm_set_errhandler(HATAORI_COMM(c), MPI_ERRORS_RETURN);
}

static int hataori_comm_rank(uintptr_t c, int *r) { return MPI_Comm_rank(HATAORI_COMM(c), r); }
static int hataori_comm_size(uintptr_t c, int *s) { return MPI_Comm_size(HATAORI_COMM(c), s); }

static int hataori_send(void *buf, int n, int dest, int tag, uintptr_t c) {
	return MPI_Send(buf, n, MPI_BYTE, dest, tag, HATAORI_COMM(c));
}

// hataori_status_out writes source, tag and byte count into out[0..2].
static int hataori_status_out(MPI_Status *st, int *out) {
	int n = 0;
	int rc = MPI_Get_count(st, MPI_BYTE, &n);
	out[0] = st->MPI_SOURCE;
	out[1] = st->MPI_TAG;
	out[2] = n;
	return rc;
}

static int hataori_recv(void *buf, int n, int src, int tag, uintptr_t c, int *out) {
	MPI_Status st;
	int rc = MPI_Recv(buf, n, MPI_BYTE, src, tag, HATAORI_COMM(c), &st);
	if (rc != MPI_SUCCESS) return rc;
	return hataori_status_out(&st, out);
}

static int hataori_probe(int src, int tag, uintptr_t c, int *out) {
	MPI_Status st;
	int rc = MPI_Probe(src, tag, HATAORI_COMM(c), &st);
	if (rc != MPI_SUCCESS) return rc;
	return hataori_status_out(&st, out);
}

// hataori_iprobe writes the flag into out[3] and, when set, the status
// into out[0..2].
static int hataori_iprobe(int src, int tag, uintptr_t c, int *out) {
	MPI_Status st;
	int flag = 0;
	int rc = MPI_Iprobe(src, tag, HATAORI_COMM(c), &flag, &st);
	out[3] = flag;
	if (rc != MPI_SUCCESS || !flag) return rc;
	return hataori_status_out(&st, out);
}

static int hataori_allreduce_min_i64s(const int64_t *in, int64_t *out, int n, uintptr_t c) {
	return MPI_Allreduce(in, out, n, MPI_INT64_T, MPI_MIN, HATAORI_COMM(c));
}

static int hataori_bcast(void *buf, int n, int root, uintptr_t c) {
	return MPI_Bcast(buf, n, MPI_BYTE, root, HATAORI_COMM(c));
}

static int hataori_barrier(uintptr_t c) { return MPI_Barrier(HATAORI_COMM(c)); }

static void hataori_abort(uintptr_t c, int code) { MPI_Abort(HATAORI_COMM(c), code); }

// hataori_op is one nonblocking control collective whose buffers live in C
// memory: MPI may use them until the request completes, long after the cgo
// call that started it returned, so they must not be Go memory. n int64s of
// input follow the struct, then n of output.
typedef struct {
	MPI_Request req;
	MPI_Comm comm; // MPI_Comm_idup's output
	int n;
	int64_t buf[];
} hataori_op;

static hataori_op *hataori_op_new(int n) {
	hataori_op *op = calloc(1, sizeof(hataori_op) + 2 * (size_t)n * sizeof(int64_t));
	if (op != NULL) {
		op->req = MPI_REQUEST_NULL;
		op->comm = MPI_COMM_NULL;
		op->n = n;
	}
	return op;
}

static int64_t *hataori_op_in(hataori_op *op) { return op->buf; }
static int64_t *hataori_op_out(hataori_op *op) { return op->buf + op->n; }
static uintptr_t hataori_op_comm(hataori_op *op) { return (uintptr_t)op->comm; }

static int hataori_op_ibarrier(hataori_op *op, uintptr_t c) {
	return MPI_Ibarrier(HATAORI_COMM(c), &op->req);
}

static int hataori_op_iallreduce_min(hataori_op *op, uintptr_t c) {
	return MPI_Iallreduce(op->buf, op->buf + op->n, op->n, MPI_INT64_T, MPI_MIN, HATAORI_COMM(c), &op->req);
}

static int hataori_op_idup(hataori_op *op, uintptr_t c) {
	return MPI_Comm_idup(HATAORI_COMM(c), &op->comm, &op->req);
}

// hataori_op_isend starts a send of n bytes at buf, Go memory that the
// caller pins (runtime.Pinner) until the request completes.
static int hataori_op_isend(hataori_op *op, void *buf, int n, int dest, int tag, uintptr_t c) {
	return MPI_Isend(buf, n, MPI_BYTE, dest, tag, HATAORI_COMM(c), &op->req);
}

static int hataori_op_test(hataori_op *op, int *done) {
	*done = 0;
	return MPI_Test(&op->req, done, MPI_STATUS_IGNORE);
}

static void hataori_op_free(hataori_op *op) { free(op); }

#endif
