package lanes_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/hataori/hataori-go/hataori"
	"github.com/hataori/hataori-go/lanes"
)

// TestLaneThreadIsNotADomainWorker checks, with a live domain, that no lane
// runs on one of its workers, by Hataori's own worker check (MapIn from a
// domain worker fails with ErrWorkerEntry, from a lane it runs). The
// workers of a Declared domain are not locked to threads, so thread ids do
// not name them.
func TestLaneThreadIsNotADomainWorker(t *testing.T) {
	d, err := hataori.NewDomain(hataori.DomainConfig{Oversubscribe: true, Workers: 2, Pinning: hataori.Declared})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
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
