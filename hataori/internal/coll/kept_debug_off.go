//go:build !hataoridebug

package coll

import "github.com/hataori/hataori-go/hataori/internal/mpi"

func noteOpen(bool, mpi.Handle) {}

func noteFree() {}

// OpenStats is what the debug hook counts under hataoridebug.
type OpenStats struct {
	Dups, Reuses, Frees int64
	Last                mpi.Handle
	Kept                int
}

// DebugOpens returns ok false: the hook counts only under hataoridebug.
func DebugOpens() (OpenStats, bool) { return OpenStats{}, false }
