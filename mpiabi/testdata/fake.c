/*
 * fake.c: a fake MPIABI library for mpiabi's loader tests (no MPI needed).
 * Built by the tests with gcc into a temporary directory. Constant values
 * are deliberately unusual so that the tests can tell they were read from
 * the library. -DFAKE_MAJOR=n changes the major version, -DFAKE_VERSION=s
 * the library version string (a C string literal); a linker version
 * script hides single symbols to produce "missing symbol" libraries.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef FAKE_MAJOR
#define FAKE_MAJOR 2
#endif
#ifndef FAKE_VERSION
#define FAKE_VERSION "MPICH Version: 0.0.0-fake\nsecond line"
#endif

typedef uintptr_t H;
typedef struct {
  uint64_t native[3];
  int source, tag, error;
} Status;

const int mpiabi_version_major = FAKE_MAJOR;
const int mpiabi_version_minor = 10;
const int mpiabi_version_patch = 3;
const char *mpiwrapper_version = "fake MPIABI fixture";

const H MPIABI_COMM_WORLD = 0x1001, MPIABI_COMM_SELF = 0x1002, MPIABI_COMM_NULL = 0x1000;
const H MPIABI_BYTE = 0x2001, MPIABI_CHAR = 0x2002, MPIABI_INT = 0x2003, MPIABI_INT32_T = 0x2004,
        MPIABI_INT64_T = 0x2005, MPIABI_UINT64_T = 0x2006, MPIABI_DOUBLE = 0x2007,
        MPIABI_FLOAT = 0x2008;
const H MPIABI_MIN = 0x3001, MPIABI_MAX = 0x3002, MPIABI_SUM = 0x3003;
const H MPIABI_STATUS_IGNORE = 0x99;
const int MPIABI_ANY_SOURCE = -7, MPIABI_ANY_TAG = -8, MPIABI_PROC_NULL = -9;
const int MPIABI_THREAD_SINGLE = 10, MPIABI_THREAD_FUNNELED = 11, MPIABI_THREAD_SERIALIZED = 12,
          MPIABI_THREAD_MULTIPLE = 13;
const int MPIABI_SUCCESS = 0;
const H MPIABI_REQUEST_NULL = 0x4000;
const H MPIABI_ERRORS_RETURN = 0x5001;

static int initialized, finalized;

/* Errors: code 3 for a negative count, 4 for a NULL status (the loader must
 * pass MPIABI_STATUS_IGNORE instead). */
static int status_out(Status *s, int source, int tag) {
  if (s == NULL) return 4;
  if ((H)s == MPIABI_STATUS_IGNORE) return 0;
  memset(s->native, 0xab, sizeof s->native);
  s->native[0] = 24; /* byte count, read back by Get_count */
  s->source = source;
  s->tag = tag;
  s->error = 0;
  return 0;
}

int MPIABI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  (void)argc; (void)argv;
  initialized = 1;
  *provided = required + 1;
  return 0;
}
int MPIABI_Init(int *argc, char ***argv) { (void)argc; (void)argv; initialized = 1; return 0; }
int MPIABI_Initialized(int *flag) { *flag = initialized; return 0; }
int MPIABI_Finalized(int *flag) { *flag = finalized; return 0; }
int MPIABI_Finalize(void) { finalized = 1; return 0; }
int MPIABI_Query_thread(int *provided) { *provided = 12; return 0; }
int MPIABI_Is_thread_main(int *flag) { *flag = 1; return 0; }
int MPIABI_Comm_dup(H c, H *out) { *out = c + 0x10; return 0; }
int MPIABI_Comm_free(H *c) { *c = MPIABI_COMM_NULL; return 0; }
int MPIABI_Comm_rank(H c, int *r) { *r = c == MPIABI_COMM_WORLD ? 0 : 5; return 0; }
int MPIABI_Comm_size(H c, int *s) { (void)c; *s = 1; return 0; }
/* Errors: code 3 for a handler other than MPIABI_ERRORS_RETURN, 5 for
 * COMM_NULL. */
int MPIABI_Comm_set_errhandler(H c, H e) {
  if (c == MPIABI_COMM_NULL) return 5;
  return e == MPIABI_ERRORS_RETURN ? 0 : 3;
}
int MPIABI_Send(const void *b, int n, H t, int d, int tag, H c) {
  (void)b; (void)t; (void)d; (void)tag; (void)c;
  return n < 0 ? 3 : 0;
}
int MPIABI_Recv(void *b, int n, H t, int src, int tag, H c, Status *s) {
  (void)t; (void)c;
  if (n < 0) return 3;
  if (n > 0) memset(b, 7, (size_t)n);
  return status_out(s, src == MPIABI_ANY_SOURCE ? 5 : src, tag == MPIABI_ANY_TAG ? 6 : tag);
}
int MPIABI_Isend(const void *b, int n, H t, int d, int tag, H c, H *req) {
  (void)b; (void)t; (void)d; (void)c;
  if (n < 0) return 3;
  *req = 0x4000 + (H)tag + 1;
  return 0;
}
int MPIABI_Wait(H *req, Status *s) {
  if (*req == MPIABI_REQUEST_NULL) return 3;
  int tag = (int)(*req - 0x4001);
  *req = MPIABI_REQUEST_NULL;
  return status_out(s, 0, tag);
}
int MPIABI_Probe(int src, int tag, H c, Status *s) { (void)c; return status_out(s, src, tag); }
int MPIABI_Iprobe(int src, int tag, H c, int *flag, Status *s) {
  (void)c;
  *flag = tag == 1;
  return *flag ? status_out(s, src, tag) : 0;
}
int MPIABI_Get_count(const Status *s, H t, int *n) {
  if ((H)s == MPIABI_STATUS_IGNORE || s == NULL) return 4;
  *n = (int)s->native[0] / (t == MPIABI_INT64_T ? 8 : 1);
  return 0;
}
int MPIABI_Allreduce(const void *in, void *out, int n, H t, H op, H c) {
  (void)op; (void)c;
  if (n < 0) return 3;
  memmove(out, in, (size_t)n * (t == MPIABI_INT64_T ? 8 : 4));
  return 0;
}
int MPIABI_Bcast(void *b, int n, H t, int root, H c) { (void)b; (void)t; (void)c; return n < 0 || root != 0 ? 3 : 0; }
int MPIABI_Barrier(H c) { return c == MPIABI_COMM_NULL ? 3 : 0; }
int MPIABI_Abort(H c, int code) { (void)c; return code == 0 ? 0 : 9; }
double MPIABI_Wtime(void) { return 12.5; }
int MPIABI_Get_library_version(char *v, int *n) {
  const char *s = FAKE_VERSION;
  strcpy(v, s);
  *n = (int)strlen(s);
  return 0;
}
int MPIABI_Error_string(int code, char *v, int *n) {
  *n = snprintf(v, 1024, "fake error %d", code);
  return 0;
}
