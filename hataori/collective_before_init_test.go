//go:build mpirt || mpicgo

package hataori

import (
	"context"
	"errors"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// A collective call in a process whose MPI is not initialised returns an
// error matching ErrNotInitialized on this rank, rather than asking
// MPI_Is_thread_main, which Open MPI answers by aborting the process. The
// test runs in the parent test process, where nothing initialised MPI.
func TestCollectiveBeforeInit(t *testing.T) {
	if up, err := mpi.Initialized(); err != nil || up {
		t.Skipf("MPI initialised (%v) or not loadable (%v)", up, err)
	}
	ctx := context.Background()
	c := CommFromHandle(uintptr(mpi.World()))
	checks := map[string]error{}
	_, checks["Pmap"] = Pmap(ctx, c, nil, Options{}, Some([]int{1}), func(x int) (int, error) { return x, nil })
	_, checks["Broadcast"] = Broadcast(ctx, c, 0, Some(1))
	_, checks["Gather"] = Gather(ctx, c, 0, 1)
	for name, err := range checks {
		if !errors.Is(err, ErrNotInitialized) || !errors.Is(err, KindPreflight) {
			t.Errorf("%s before MPI_Init = %v; want a local preflight error matching ErrNotInitialized", name, err)
		}
	}
}
