//go:build !linux

package coll

import (
	"sync/atomic"
	"time"
)

// Kick is an event count (see kick_linux.go); off Linux a waiter polls it
// with short sleeps.
type Kick struct{ n atomic.Uint32 }

func (k *Kick) Seq() uint32 { return k.n.Load() }

func (k *Kick) Wait(seen uint32, d time.Duration) bool {
	end := time.Now().Add(d)
	for k.n.Load() == seen && time.Now().Before(end) {
		time.Sleep(min(d, 10*time.Microsecond))
	}
	return k.n.Load() != seen
}

func (k *Kick) Signal()    { k.n.Add(1) }
func (k *Kick) SignalOne() { k.n.Add(1) }
