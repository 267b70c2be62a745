/*
 * mpiabi.h: the MPIABI 2.x binary interface (the interface of MPItrampoline's
 * MPIwrapper), as far as Hataori uses it. Written for the Hataori project.
 *
 * Functions are named MPIABI_<Name>; constants are read-only data symbols
 * named MPIABI_<NAME> that hold the value (handles as uintptr_t, the native
 * handle of the wrapped MPI widened: an object address under Open MPI, an int
 * under MPICH). This header does not include mpi.h.
 */
#ifndef HATAORI_MPIABI_H
#define HATAORI_MPIABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPIABI_EXPORT __attribute__((visibility("default")))

/* Limits: #defines, not symbols. */
#define MPIABI_MAX_PROCESSOR_NAME 256
#define MPIABI_MAX_LIBRARY_VERSION_STRING 8192
#define MPIABI_MAX_ERROR_STRING 1024

typedef uintptr_t MPIABI_Comm;
typedef uintptr_t MPIABI_Datatype;
typedef uintptr_t MPIABI_Op;
typedef uintptr_t MPIABI_Request;
typedef uintptr_t MPIABI_Errhandler;

/* 40 bytes, 8-aligned: the wrapped MPI's own status first (whole), then the
 * public fields at offsets 24, 28 and 32. */
typedef struct MPIABI_Status {
  union {
    unsigned char bytes[24];
    uint64_t align[3];
  } mpi_status;
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
} MPIABI_Status;

_Static_assert(sizeof(MPIABI_Status) == 40, "MPIABI_Status must be 40 bytes");
_Static_assert(__builtin_offsetof(MPIABI_Status, MPI_SOURCE) == 24, "SOURCE at 24");
_Static_assert(__builtin_offsetof(MPIABI_Status, MPI_TAG) == 28, "TAG at 28");
_Static_assert(__builtin_offsetof(MPIABI_Status, MPI_ERROR) == 32, "ERROR at 32");

/* Version data. */
extern MPIABI_EXPORT const int mpiabi_version_major;
extern MPIABI_EXPORT const int mpiabi_version_minor;
extern MPIABI_EXPORT const int mpiabi_version_patch;
extern MPIABI_EXPORT const char *mpiwrapper_version;

/* Constants. */
extern MPIABI_EXPORT const MPIABI_Comm MPIABI_COMM_WORLD, MPIABI_COMM_SELF, MPIABI_COMM_NULL;
extern MPIABI_EXPORT const MPIABI_Datatype MPIABI_BYTE, MPIABI_CHAR, MPIABI_INT,
    MPIABI_INT8_T, MPIABI_INT16_T, MPIABI_INT32_T, MPIABI_INT64_T,
    MPIABI_UINT8_T, MPIABI_UINT16_T, MPIABI_UINT32_T, MPIABI_UINT64_T,
    MPIABI_LONG, MPIABI_UNSIGNED_LONG, MPIABI_DOUBLE, MPIABI_FLOAT,
    MPIABI_DATATYPE_NULL;
extern MPIABI_EXPORT const MPIABI_Op MPIABI_MIN, MPIABI_MAX, MPIABI_SUM, MPIABI_PROD,
    MPIABI_LAND, MPIABI_LOR, MPIABI_BAND, MPIABI_BOR, MPIABI_OP_NULL;
extern MPIABI_EXPORT const MPIABI_Request MPIABI_REQUEST_NULL;
extern MPIABI_EXPORT const MPIABI_Errhandler MPIABI_ERRHANDLER_NULL, MPIABI_ERRORS_ARE_FATAL,
    MPIABI_ERRORS_RETURN;
extern MPIABI_EXPORT const uintptr_t MPIABI_STATUS_IGNORE, MPIABI_IN_PLACE;
extern MPIABI_EXPORT const int MPIABI_ANY_SOURCE, MPIABI_ANY_TAG, MPIABI_PROC_NULL,
    MPIABI_ROOT, MPIABI_UNDEFINED;
extern MPIABI_EXPORT const int MPIABI_THREAD_SINGLE, MPIABI_THREAD_FUNNELED,
    MPIABI_THREAD_SERIALIZED, MPIABI_THREAD_MULTIPLE;
extern MPIABI_EXPORT const int MPIABI_SUCCESS, MPIABI_ERR_OTHER;

/* Functions (all return an MPI error code, except MPIABI_Wtime). */
MPIABI_EXPORT int MPIABI_Init(int *argc, char ***argv);
MPIABI_EXPORT int MPIABI_Init_thread(int *argc, char ***argv, int required, int *provided);
MPIABI_EXPORT int MPIABI_Initialized(int *flag);
MPIABI_EXPORT int MPIABI_Finalized(int *flag);
MPIABI_EXPORT int MPIABI_Finalize(void);
MPIABI_EXPORT int MPIABI_Query_thread(int *provided);
MPIABI_EXPORT int MPIABI_Is_thread_main(int *flag);
MPIABI_EXPORT int MPIABI_Comm_dup(MPIABI_Comm comm, MPIABI_Comm *newcomm);
MPIABI_EXPORT int MPIABI_Comm_free(MPIABI_Comm *comm);
MPIABI_EXPORT int MPIABI_Comm_rank(MPIABI_Comm comm, int *rank);
MPIABI_EXPORT int MPIABI_Comm_size(MPIABI_Comm comm, int *size);
MPIABI_EXPORT int MPIABI_Comm_set_errhandler(MPIABI_Comm comm, MPIABI_Errhandler errhandler);
MPIABI_EXPORT int MPIABI_Send(const void *buf, int count, MPIABI_Datatype datatype,
                              int dest, int tag, MPIABI_Comm comm);
MPIABI_EXPORT int MPIABI_Recv(void *buf, int count, MPIABI_Datatype datatype,
                              int source, int tag, MPIABI_Comm comm, MPIABI_Status *status);
MPIABI_EXPORT int MPIABI_Isend(const void *buf, int count, MPIABI_Datatype datatype,
                               int dest, int tag, MPIABI_Comm comm, MPIABI_Request *request);
MPIABI_EXPORT int MPIABI_Wait(MPIABI_Request *request, MPIABI_Status *status);
MPIABI_EXPORT int MPIABI_Comm_idup(MPIABI_Comm comm, MPIABI_Comm *newcomm, MPIABI_Request *request);
MPIABI_EXPORT int MPIABI_Test(MPIABI_Request *request, int *flag, MPIABI_Status *status);
MPIABI_EXPORT int MPIABI_Ibarrier(MPIABI_Comm comm, MPIABI_Request *request);
MPIABI_EXPORT int MPIABI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                                    MPIABI_Datatype datatype, MPIABI_Op op, MPIABI_Comm comm,
                                    MPIABI_Request *request);
MPIABI_EXPORT int MPIABI_Probe(int source, int tag, MPIABI_Comm comm, MPIABI_Status *status);
MPIABI_EXPORT int MPIABI_Iprobe(int source, int tag, MPIABI_Comm comm, int *flag,
                                MPIABI_Status *status);
MPIABI_EXPORT int MPIABI_Get_count(const MPIABI_Status *status, MPIABI_Datatype datatype,
                                   int *count);
MPIABI_EXPORT int MPIABI_Allreduce(const void *sendbuf, void *recvbuf, int count,
                                   MPIABI_Datatype datatype, MPIABI_Op op, MPIABI_Comm comm);
MPIABI_EXPORT int MPIABI_Bcast(void *buf, int count, MPIABI_Datatype datatype, int root,
                               MPIABI_Comm comm);
MPIABI_EXPORT int MPIABI_Barrier(MPIABI_Comm comm);
MPIABI_EXPORT int MPIABI_Abort(MPIABI_Comm comm, int errorcode);
MPIABI_EXPORT double MPIABI_Wtime(void);
MPIABI_EXPORT int MPIABI_Get_library_version(char *version, int *resultlen);
MPIABI_EXPORT int MPIABI_Get_version(int *version, int *subversion);
MPIABI_EXPORT int MPIABI_Error_string(int errorcode, char *string, int *resultlen);

#ifdef __cplusplus
}
#endif

#endif /* HATAORI_MPIABI_H */
