package lanes_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

// domainWorkerTids runs one Outer item per worker of d, each holding its
// worker until every item has started, so every worker reports its thread.
func domainWorkerTids(t *testing.T, d *hataori.Domain) map[int]bool {
	t.Helper()
	n := d.Workers()
	var mu sync.Mutex
	tids := map[int]bool{}
	var started sync.WaitGroup
	started.Add(n)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	_, err := hataori.MapIn(context.Background(), d, hataori.Outer, make([]int, n), func(int) (int, error) {
		mu.Lock()
		tids[unix.Gettid()] = true
		mu.Unlock()
		started.Done()
		select {
		case <-all:
			return 0, nil
		case <-time.After(10 * time.Second):
			return 0, errors.New("the domain's workers did not all take an item")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tids) != n {
		t.Fatalf("observed %d worker threads, want %d", len(tids), n)
	}
	return tids
}

// TestLaneThreadIsNotADomainWorker checks, with a live domain, that no lane
// runs on one of its workers: by thread id, and by Hataori's own worker
// check (MapIn from a domain worker fails with ErrWorkerEntry, from a lane
// it runs).
func TestLaneThreadIsNotADomainWorker(t *testing.T) {
	d, err := hataori.NewDomain(hataori.DomainConfig{Workers: 2, Placement: hataori.Declared})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	workers := domainWorkerTids(t, d)

	// The check can fail: from a domain worker, MapIn is refused.
	_, err = hataori.MapIn(context.Background(), d, hataori.Sequential, []int{0}, func(int) (int, error) {
		_, err := hataori.MapIn(context.Background(), d, hataori.Sequential, []int{0}, func(int) (int, error) { return 0, nil })
		return 0, err
	})
	if !errors.Is(err, hataori.ErrWorkerEntry) {
		t.Fatalf("MapIn from a domain worker: %v, want ErrWorkerEntry", err)
	}

	l := newLanes(t)
	var mu sync.Mutex
	err = l.Run(context.Background(), func(lane int, e *poolEngine, c *lanes.Control) error {
		tid := unix.Gettid()
		if workers[tid] {
			return errors.New("lane runs on a domain worker thread")
		}
		// One lane at a time may hold the domain.
		mu.Lock()
		defer mu.Unlock()
		_, err := hataori.MapIn(context.Background(), d, hataori.Outer, []int{1, 2}, func(x int) (int, error) { return x, nil })
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
