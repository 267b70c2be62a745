/*
 * mpiabi_wrapper.c: an MPIABI 2.x library over the system MPI, written for
 * the Hataori project. Build it with the MPI's compiler wrapper, e.g.
 *   mpicc       -O2 -fPIC -shared -o libmpiabi-openmpi.so mpiabi_wrapper.c
 *   mpicc.mpich -O2 -fPIC -shared -o libmpiabi-mpich.so   mpiabi_wrapper.c
 *
 * It exports the names, types, values and status layout of MPItrampoline's
 * MPIwrapper (MPIABI 2.10), so a loader works the same with either library.
 * A handle is the native handle widened to uintptr_t, with no table: an
 * object address under Open MPI, the int (zero-extended) under MPICH.
 */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mpiabi.h"

/* ---- handle conversion ------------------------------------------------ */

#if defined(OPEN_MPI)
/* Open MPI handles are pointers to predefined or allocated objects. */
#define WRAPPED_MPI "Open MPI"
#define ABI(h) ((uintptr_t)(h))
#define N_COMM(h) ((MPI_Comm)(h))
#define N_TYPE(h) ((MPI_Datatype)(h))
#define N_OP(h) ((MPI_Op)(h))
#define N_REQ(h) ((MPI_Request)(h))
#define N_ERRH(h) ((MPI_Errhandler)(h))
#elif defined(MPICH_VERSION) || defined(MPICH)
/* MPICH handles are ints; widen them without sign extension. Narrowing back
 * keeps the low 32 bits, so sign-extended integers are accepted as well. */
#define WRAPPED_MPI "MPICH"
#define ABI(h) ((uintptr_t)(uint32_t)(h))
#define N_COMM(h) ((MPI_Comm)(uint32_t)(h))
#define N_TYPE(h) ((MPI_Datatype)(uint32_t)(h))
#define N_OP(h) ((MPI_Op)(uint32_t)(h))
#define N_REQ(h) ((MPI_Request)(uint32_t)(h))
#define N_ERRH(h) ((MPI_Errhandler)(uint32_t)(h))
#else
#error "unknown MPI implementation: build with Open MPI's mpicc or MPICH's mpicc.mpich"
#endif

_Static_assert(sizeof(MPI_Status) <= 24, "native MPI_Status must fit in 24 bytes");

/* ---- version data ------------------------------------------------------ */

const int mpiabi_version_major = 2;
const int mpiabi_version_minor = 10;
const int mpiabi_version_patch = 0;
const char *mpiwrapper_version = "hataori-mpiabi-wrapper 1.0 (MPIABI 2.10.0) over " WRAPPED_MPI;

/* ---- constants (read-only data symbols holding the value) -------------- */

const MPIABI_Comm MPIABI_COMM_WORLD = ABI(MPI_COMM_WORLD);
const MPIABI_Comm MPIABI_COMM_SELF = ABI(MPI_COMM_SELF);
const MPIABI_Comm MPIABI_COMM_NULL = ABI(MPI_COMM_NULL);

const MPIABI_Datatype MPIABI_BYTE = ABI(MPI_BYTE);
const MPIABI_Datatype MPIABI_CHAR = ABI(MPI_CHAR);
const MPIABI_Datatype MPIABI_INT = ABI(MPI_INT);
const MPIABI_Datatype MPIABI_INT8_T = ABI(MPI_INT8_T);
const MPIABI_Datatype MPIABI_INT16_T = ABI(MPI_INT16_T);
const MPIABI_Datatype MPIABI_INT32_T = ABI(MPI_INT32_T);
const MPIABI_Datatype MPIABI_INT64_T = ABI(MPI_INT64_T);
const MPIABI_Datatype MPIABI_UINT8_T = ABI(MPI_UINT8_T);
const MPIABI_Datatype MPIABI_UINT16_T = ABI(MPI_UINT16_T);
const MPIABI_Datatype MPIABI_UINT32_T = ABI(MPI_UINT32_T);
const MPIABI_Datatype MPIABI_UINT64_T = ABI(MPI_UINT64_T);
const MPIABI_Datatype MPIABI_LONG = ABI(MPI_LONG);
const MPIABI_Datatype MPIABI_UNSIGNED_LONG = ABI(MPI_UNSIGNED_LONG);
const MPIABI_Datatype MPIABI_DOUBLE = ABI(MPI_DOUBLE);
const MPIABI_Datatype MPIABI_FLOAT = ABI(MPI_FLOAT);
const MPIABI_Datatype MPIABI_DATATYPE_NULL = ABI(MPI_DATATYPE_NULL);

const MPIABI_Op MPIABI_MIN = ABI(MPI_MIN);
const MPIABI_Op MPIABI_MAX = ABI(MPI_MAX);
const MPIABI_Op MPIABI_SUM = ABI(MPI_SUM);
const MPIABI_Op MPIABI_PROD = ABI(MPI_PROD);
const MPIABI_Op MPIABI_LAND = ABI(MPI_LAND);
const MPIABI_Op MPIABI_LOR = ABI(MPI_LOR);
const MPIABI_Op MPIABI_BAND = ABI(MPI_BAND);
const MPIABI_Op MPIABI_BOR = ABI(MPI_BOR);
const MPIABI_Op MPIABI_OP_NULL = ABI(MPI_OP_NULL);
const MPIABI_Request MPIABI_REQUEST_NULL = ABI(MPI_REQUEST_NULL);
const MPIABI_Errhandler MPIABI_ERRHANDLER_NULL = ABI(MPI_ERRHANDLER_NULL);
const MPIABI_Errhandler MPIABI_ERRORS_ARE_FATAL = ABI(MPI_ERRORS_ARE_FATAL);
const MPIABI_Errhandler MPIABI_ERRORS_RETURN = ABI(MPI_ERRORS_RETURN);

/* The native sentinels, as MPIwrapper exports them: NULL under Open MPI,
 * (MPI_Status *)1 under MPICH. */
const uintptr_t MPIABI_STATUS_IGNORE = (uintptr_t)MPI_STATUS_IGNORE;
const uintptr_t MPIABI_IN_PLACE = (uintptr_t)MPI_IN_PLACE;

const int MPIABI_ANY_SOURCE = MPI_ANY_SOURCE;
const int MPIABI_ANY_TAG = MPI_ANY_TAG;
const int MPIABI_PROC_NULL = MPI_PROC_NULL;
const int MPIABI_ROOT = MPI_ROOT;
const int MPIABI_UNDEFINED = MPI_UNDEFINED;

const int MPIABI_THREAD_SINGLE = MPI_THREAD_SINGLE;
const int MPIABI_THREAD_FUNNELED = MPI_THREAD_FUNNELED;
const int MPIABI_THREAD_SERIALIZED = MPI_THREAD_SERIALIZED;
const int MPIABI_THREAD_MULTIPLE = MPI_THREAD_MULTIPLE;

const int MPIABI_SUCCESS = MPI_SUCCESS;
const int MPIABI_ERR_OTHER = MPI_ERR_OTHER;

/* ---- status ------------------------------------------------------------ */

/* ignored reports whether an MPIABI status pointer means "ignore". NULL is
 * accepted too, so a caller passing a literal NULL does not crash MPICH. */
static inline int ignored(const MPIABI_Status *s) {
  return s == NULL || (uintptr_t)s == MPIABI_STATUS_IGNORE;
}

/* native returns where the wrapped MPI writes its own status: the first 24
 * bytes of the MPIABI status, whole, so Get_count can read it back. */
static inline MPI_Status *native(MPIABI_Status *s) {
  return ignored(s) ? MPI_STATUS_IGNORE : (MPI_Status *)(void *)s->mpi_status.bytes;
}

/* publish copies the public fields to offsets 24/28/32. */
static inline void publish(MPIABI_Status *s) {
  if (ignored(s)) return;
  const MPI_Status *n = (const MPI_Status *)(const void *)s->mpi_status.bytes;
  s->MPI_SOURCE = n->MPI_SOURCE;
  s->MPI_TAG = n->MPI_TAG;
  s->MPI_ERROR = n->MPI_ERROR;
}

/* ---- environment ------------------------------------------------------- */

int MPIABI_Init(int *argc, char ***argv) { return MPI_Init(argc, argv); }

int MPIABI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  return MPI_Init_thread(argc, argv, required, provided);
}

int MPIABI_Initialized(int *flag) { return MPI_Initialized(flag); }
int MPIABI_Finalized(int *flag) { return MPI_Finalized(flag); }
int MPIABI_Finalize(void) { return MPI_Finalize(); }
int MPIABI_Query_thread(int *provided) { return MPI_Query_thread(provided); }
int MPIABI_Is_thread_main(int *flag) { return MPI_Is_thread_main(flag); }
double MPIABI_Wtime(void) { return MPI_Wtime(); }
int MPIABI_Abort(MPIABI_Comm comm, int errorcode) { return MPI_Abort(N_COMM(comm), errorcode); }
int MPIABI_Get_version(int *version, int *subversion) { return MPI_Get_version(version, subversion); }

int MPIABI_Get_library_version(char *version, int *resultlen) {
  /* MPIABI_MAX_LIBRARY_VERSION_STRING >= MPI_MAX_LIBRARY_VERSION_STRING. */
  _Static_assert(MPI_MAX_LIBRARY_VERSION_STRING <= MPIABI_MAX_LIBRARY_VERSION_STRING,
                 "library version buffer");
  return MPI_Get_library_version(version, resultlen);
}

int MPIABI_Error_string(int errorcode, char *string, int *resultlen) {
  _Static_assert(MPI_MAX_ERROR_STRING <= MPIABI_MAX_ERROR_STRING, "error string buffer");
  return MPI_Error_string(errorcode, string, resultlen);
}

/* ---- communicators ----------------------------------------------------- */

int MPIABI_Comm_dup(MPIABI_Comm comm, MPIABI_Comm *newcomm) {
  MPI_Comm n = MPI_COMM_NULL;
  int r = MPI_Comm_dup(N_COMM(comm), &n);
  *newcomm = ABI(n);
  return r;
}

#if defined(OPEN_MPI) || __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* MPI_Comm_idup writes the new handle when the request completes, after
 * this function has returned, so it writes straight into the caller's
 * MPIABI_Comm, zeroed first: the ABI handle is the native one widened
 * (Open MPI: the same pointer; MPICH: the int, zero-extended, which on a
 * little-endian machine is the int in the low bytes). */
_Static_assert(sizeof(MPI_Comm) <= sizeof(MPIABI_Comm), "native communicator wider than MPIABI_Comm");
int MPIABI_Comm_idup(MPIABI_Comm comm, MPIABI_Comm *newcomm, MPIABI_Request *request) {
  MPI_Request n = MPI_REQUEST_NULL;
  *newcomm = 0;
  int r = MPI_Comm_idup(N_COMM(comm), (MPI_Comm *)newcomm, &n);
  *request = ABI(n);
  return r;
}
#endif

int MPIABI_Comm_free(MPIABI_Comm *comm) {
  MPI_Comm n = N_COMM(*comm);
  int r = MPI_Comm_free(&n);
  *comm = ABI(n);
  return r;
}

int MPIABI_Comm_rank(MPIABI_Comm comm, int *rank) { return MPI_Comm_rank(N_COMM(comm), rank); }
int MPIABI_Comm_size(MPIABI_Comm comm, int *size) { return MPI_Comm_size(N_COMM(comm), size); }

int MPIABI_Comm_set_errhandler(MPIABI_Comm comm, MPIABI_Errhandler errhandler) {
  return MPI_Comm_set_errhandler(N_COMM(comm), N_ERRH(errhandler));
}

/* ---- point to point ---------------------------------------------------- */

int MPIABI_Send(const void *buf, int count, MPIABI_Datatype datatype, int dest, int tag,
                MPIABI_Comm comm) {
  return MPI_Send(buf, count, N_TYPE(datatype), dest, tag, N_COMM(comm));
}

int MPIABI_Recv(void *buf, int count, MPIABI_Datatype datatype, int source, int tag,
                MPIABI_Comm comm, MPIABI_Status *status) {
  int r = MPI_Recv(buf, count, N_TYPE(datatype), source, tag, N_COMM(comm), native(status));
  publish(status);
  return r;
}

int MPIABI_Isend(const void *buf, int count, MPIABI_Datatype datatype, int dest, int tag,
                 MPIABI_Comm comm, MPIABI_Request *request) {
  MPI_Request n = MPI_REQUEST_NULL;
  int r = MPI_Isend(buf, count, N_TYPE(datatype), dest, tag, N_COMM(comm), &n);
  *request = ABI(n);
  return r;
}

int MPIABI_Wait(MPIABI_Request *request, MPIABI_Status *status) {
  MPI_Request n = N_REQ(*request);
  int r = MPI_Wait(&n, native(status));
  *request = ABI(n);
  publish(status);
  return r;
}

int MPIABI_Probe(int source, int tag, MPIABI_Comm comm, MPIABI_Status *status) {
  int r = MPI_Probe(source, tag, N_COMM(comm), native(status));
  publish(status);
  return r;
}

int MPIABI_Iprobe(int source, int tag, MPIABI_Comm comm, int *flag, MPIABI_Status *status) {
  int r = MPI_Iprobe(source, tag, N_COMM(comm), flag, native(status));
  if (r == MPI_SUCCESS && *flag) publish(status);
  return r;
}

int MPIABI_Get_count(const MPIABI_Status *status, MPIABI_Datatype datatype, int *count) {
  if (ignored(status)) return MPI_ERR_ARG;
  return MPI_Get_count((const MPI_Status *)(const void *)status->mpi_status.bytes,
                       N_TYPE(datatype), count);
}

/* ---- collectives ------------------------------------------------------- */

int MPIABI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPIABI_Datatype datatype,
                     MPIABI_Op op, MPIABI_Comm comm) {
  /* MPIABI_IN_PLACE has the native value, so sendbuf passes through. */
  return MPI_Allreduce(sendbuf, recvbuf, count, N_TYPE(datatype), N_OP(op), N_COMM(comm));
}

int MPIABI_Bcast(void *buf, int count, MPIABI_Datatype datatype, int root, MPIABI_Comm comm) {
  return MPI_Bcast(buf, count, N_TYPE(datatype), root, N_COMM(comm));
}

int MPIABI_Barrier(MPIABI_Comm comm) { return MPI_Barrier(N_COMM(comm)); }

int MPIABI_Ibarrier(MPIABI_Comm comm, MPIABI_Request *request) {
  MPI_Request n = MPI_REQUEST_NULL;
  int r = MPI_Ibarrier(N_COMM(comm), &n);
  *request = ABI(n);
  return r;
}

int MPIABI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPIABI_Datatype datatype,
                      MPIABI_Op op, MPIABI_Comm comm, MPIABI_Request *request) {
  MPI_Request n = MPI_REQUEST_NULL;
  int r = MPI_Iallreduce(sendbuf, recvbuf, count, N_TYPE(datatype), N_OP(op), N_COMM(comm), &n);
  *request = ABI(n);
  return r;
}

int MPIABI_Test(MPIABI_Request *request, int *flag, MPIABI_Status *status) {
  MPI_Request n = N_REQ(*request);
  int r = MPI_Test(&n, flag, native(status));
  *request = ABI(n);
  if (r == MPI_SUCCESS && *flag) publish(status);
  return r;
}
