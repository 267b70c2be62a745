//go:build hataoridebug

package coll

import (
	"sync"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

// opens counts how calls got their private communicator (hataoridebug only).
var opens struct {
	sync.Mutex
	dups, reuses, frees int64
	last                mpi.Handle
}

func noteOpen(reused bool, h mpi.Handle) {
	opens.Lock()
	defer opens.Unlock()
	if reused {
		opens.reuses++
	} else {
		opens.dups++
	}
	opens.last = h
}

func noteFree() {
	opens.Lock()
	opens.frees++
	opens.Unlock()
}

// OpenStats is what the debug hook counted so far.
type OpenStats struct {
	Dups, Reuses, Frees int64      // new duplicates, kept ones taken, duplicates freed
	Last                mpi.Handle // the private communicator of the last call
	Kept                int        // duplicates kept now, over every parent
}

// DebugOpens returns the counts of the debug hook; ok is false without
// the hataoridebug tag.
func DebugOpens() (s OpenStats, ok bool) {
	opens.Lock()
	s = OpenStats{Dups: opens.dups, Reuses: opens.reuses, Frees: opens.frees, Last: opens.last}
	opens.Unlock()
	kept.Lock()
	s.Kept = len(kept.all)
	kept.Unlock()
	return s, true
}
