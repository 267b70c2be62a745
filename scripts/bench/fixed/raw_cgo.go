//go:build mpicgo && !mpirt

package main

/*
#include <mpi.h>
#include <stdint.h>

static int fixed_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

static int fixed_max_i64(int64_t v, int64_t *out) {
	return MPI_Allreduce(&v, out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
}

static int fixed_dup_allreduce_free(int64_t *vec, int64_t *out) {
	MPI_Comm dup;
	int rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	if (rc != MPI_SUCCESS) return rc;
	rc = MPI_Allreduce(vec, out, 8, MPI_INT64_T, MPI_MIN, dup);
	if (rc != MPI_SUCCESS) return rc;
	return MPI_Comm_free(&dup);
}

static int fixed_version(char *buf, int *len) { return MPI_Get_library_version(buf, len); }
*/
import "C"

import (
	"log"
	"strings"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
)

// cgoRaw is the raw MPI of the cgo backend: the MPI this program is linked
// with (CC=mpicc or CC=mpicc.mpich), called from C on MPI_COMM_WORLD.
type cgoRaw struct{}

// openWorld initialises MPI through Hataori and returns its world
// communicator, the raw MPI on the same library and a finalize.
func openWorld() (hataori.Comm, raw, func(), error) {
	if _, err := hataori.InitThread(hataori.ThreadFunneled); err != nil {
		return hataori.Comm{}, nil, nil, err
	}
	finalize := func() { _ = hataori.Finalize() }
	comm, err := hataori.World()
	if err != nil {
		finalize()
		return comm, nil, nil, err
	}
	return comm, cgoRaw{}, finalize, nil
}

func check(what string, rc C.int) {
	if rc != C.MPI_SUCCESS {
		log.Fatalf("%s: MPI error %d", what, int(rc))
	}
}

func (cgoRaw) backend() string { return "cgo backend" }

func (cgoRaw) version() string {
	buf := make([]byte, C.MPI_MAX_LIBRARY_VERSION_STRING+1)
	var n C.int
	check("MPI_Get_library_version", C.fixed_version((*C.char)(unsafe.Pointer(&buf[0])), &n))
	ver := string(buf[:n])
	ver, _, _ = strings.Cut(ver, "\n")
	ver, _, _ = strings.Cut(ver, ",")
	return ver
}

func (cgoRaw) barrier() { check("MPI_Barrier", C.fixed_barrier()) }

func (cgoRaw) maxInt64(v int64) int64 {
	var out C.int64_t
	check("MPI_Allreduce", C.fixed_max_i64(C.int64_t(v), &out))
	return int64(out)
}

func (cgoRaw) dupAllreduceFree(vec, out *[8]int64) {
	check("raw Comm_dup/Allreduce/Comm_free", C.fixed_dup_allreduce_free((*C.int64_t)(unsafe.Pointer(&vec[0])), (*C.int64_t)(unsafe.Pointer(&out[0]))))
}
