//go:build mpirt

package main

import (
	"fmt"
	"log"
	"os"
	"strings"
	"unsafe"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/mpiabi"
	"github.com/hataori/hataori-go/scripts/bench/internal/rawmpi"
)

// rtRaw is the raw MPI of the run-time backend: the MPIABI library
// Hataori loaded, through the public mpiabi binding.
type rtRaw struct {
	lib   *mpiabi.Lib
	world mpiabi.Comm
}

// openWorld initialises MPI through Hataori and returns its world
// communicator, the raw MPI on the same library and a finalize.
func openWorld() (hataori.Comm, raw, func(), error) {
	comm, lib, w, finalize, err := rawmpi.World()
	if err != nil {
		return comm, nil, nil, err
	}
	return comm, &rtRaw{lib: lib, world: w}, finalize, nil
}

func (r *rtRaw) backend() string {
	return fmt.Sprintf("run-time backend, MPIABI %s", os.Getenv(mpiabi.EnvVar))
}

func (r *rtRaw) version() string {
	ver, _ := r.lib.LibraryVersion()
	ver, _, _ = strings.Cut(ver, "\n")
	ver, _, _ = strings.Cut(ver, ",")
	return ver
}

func (r *rtRaw) barrier() {
	if err := r.lib.Barrier(r.world); err != nil {
		log.Fatal(err)
	}
}

func (r *rtRaw) maxInt64(v int64) int64 {
	var out int64
	if err := r.lib.Allreduce(unsafe.Pointer(&v), unsafe.Pointer(&out), 1, r.lib.Int64, r.lib.Max, r.world); err != nil {
		log.Fatal(err)
	}
	return out
}

func (r *rtRaw) dupAllreduceFree(vec, out *[8]int64) {
	lib := r.lib
	dup, err := lib.CommDup(r.world)
	if err != nil {
		log.Fatal(err)
	}
	if err := lib.Allreduce(unsafe.Pointer(vec), unsafe.Pointer(out), len(vec), lib.Int64, lib.Min, dup); err != nil {
		log.Fatal(err)
	}
	if err := lib.CommFree(&dup); err != nil {
		log.Fatal(err)
	}
}
