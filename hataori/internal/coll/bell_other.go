//go:build !linux

package coll

import (
	"errors"
	"time"
)

// Bell is a Kick shared between the processes of one host (see
// bell_linux.go); off Linux there is none: NewBell and OpenBell fail and
// the root polls as without one.
type Bell struct{ ref BellRef }

// BellRef names a Bell for the processes of its host.
type BellRef struct {
	PID   int
	FD    int
	Host  uint64
	Nonce uint64
}

var errNoBell = errors.New("hataori: no bell off Linux")

func NewBell(host, nonce uint64) (*Bell, error)        { return nil, errNoBell }
func OpenBell(ref BellRef, host uint64) (*Bell, error) { return nil, errNoBell }
func (b *Bell) Ref() BellRef                           { return b.ref }
func (b *Bell) Seq() uint32                            { return 0 }
func (b *Bell) Wait(seen uint32, d time.Duration) bool { ThreadSleep(d); return false }
func (b *Bell) Ring()                                  {}
