//go:build !linux

package hataori

import (
	"sync/atomic"
	"time"
)

// kick is an event count (see kick_linux.go); off Linux a waiter polls it
// with short sleeps.
type kick struct{ n atomic.Uint32 }

func (k *kick) seq() uint32 { return k.n.Load() }

func (k *kick) wait(seen uint32, d time.Duration) bool {
	end := time.Now().Add(d)
	for k.n.Load() == seen && time.Now().Before(end) {
		time.Sleep(min(d, 10*time.Microsecond))
	}
	return k.n.Load() != seen
}

func (k *kick) signal()    { k.n.Add(1) }
func (k *kick) signalOne() { k.n.Add(1) }
