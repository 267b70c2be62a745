//go:build mpirt

// Package rawmpi gives the benchmark programs the raw MPI their baselines
// need, on the same library and communicator Hataori uses: the run-time
// backend's MPIABI library through the public mpiabi binding.
package rawmpi

import (
	"fmt"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/mpiabi"
)

// World initialises MPI through Hataori (MPI_THREAD_FUNNELED) and returns
// Hataori's world communicator, the library Hataori's backend loaded
// (mpiabi.Load returns that one once it is open) and the world's MPIABI
// handle, checked to be that library's MPI_COMM_WORLD; finalize ends MPI.
// Call it from the main goroutine, locked to its thread.
func World() (comm hataori.Comm, lib *mpiabi.Lib, world mpiabi.Comm, finalize func(), err error) {
	if _, err = hataori.InitThread(hataori.ThreadFunneled); err != nil {
		return comm, nil, 0, nil, err
	}
	finalize = func() { _ = hataori.Finalize() }
	if comm, err = hataori.World(); err == nil {
		lib, err = mpiabi.Load()
	}
	if err != nil {
		finalize()
		return comm, nil, 0, nil, err
	}
	world = mpiabi.Comm(comm.Handle())
	if world != lib.CommWorld {
		finalize()
		return comm, nil, 0, nil, fmt.Errorf("hataori.World().Handle() = %#x, mpiabi CommWorld = %#x", world, lib.CommWorld)
	}
	return comm, lib, world, finalize, nil
}
