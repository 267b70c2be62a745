//go:build !mpirt && !mpicgo

package mpi_test

import (
	"errors"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

func TestNoBackend(t *testing.T) {
	if mpi.Backend() != "none" || mpi.LinkedMPI() != "" || mpi.World() != 0 {
		t.Fatalf("Backend %q, LinkedMPI %q, World %#x", mpi.Backend(), mpi.LinkedMPI(), uintptr(mpi.World()))
	}
	h := mpi.World()
	calls := map[string]error{"Load": mpi.Load(), "Finalize": mpi.Finalize(), "Free": mpi.Free(&h),
		"Send": mpi.Send(h, nil, 0, 0), "Bcast": mpi.Bcast(h, nil, 0), "Barrier": mpi.Barrier(h),
		"CheckLauncher": mpi.CheckLauncher(h), "SetErrorsReturn": mpi.SetErrorsReturn(h)}
	_, calls["InitThread"] = mpi.InitThread(mpi.ThreadFunneled)
	_, calls["Initialized"] = mpi.Initialized()
	_, calls["Finalized"] = mpi.Finalized()
	_, calls["QueryThread"] = mpi.QueryThread()
	_, calls["IsThreadMain"] = mpi.IsThreadMain()
	_, calls["Dup"] = mpi.Dup(h)
	_, calls["Rank"] = mpi.Rank(h)
	_, calls["Size"] = mpi.Size(h)
	_, calls["Recv"] = mpi.Recv(h, nil, 0, 0)
	_, calls["Probe"] = mpi.Probe(h, 0, 0)
	_, _, calls["Iprobe"] = mpi.Iprobe(h, 0, 0)
	calls["AllreduceMinInt64s"] = mpi.AllreduceMinInt64s(h, []int64{1}, []int64{0})
	for name, err := range calls {
		if !errors.Is(err, mpi.ErrNoBackend) {
			t.Errorf("%s = %v, want ErrNoBackend", name, err)
		}
	}
}
