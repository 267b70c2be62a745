// Package gather holds the cross-rank reductions the benchmark programs
// share, over a hataori.Comm's point-to-point messages.
package gather

import (
	"encoding/binary"
	"time"

	"github.com/hataori/hataori-go/hataori"
)

// RemotePerItem gathers on rank 0 the other ranks' steady-state time per
// item: each rank's span between its first and last callback (first, last
// in ns) over calls items, so READY/TASK/RESULT traffic is included,
// averaged over the ranks that ran at least two items; 0 when none did.
// Every rank of world calls it; only rank 0's result means anything. It
// uses tag 8 of world.
func RemotePerItem(world hataori.Comm, rank, size int, first, last, calls int64) (time.Duration, error) {
	var buf [16]byte
	if rank != 0 {
		binary.LittleEndian.PutUint64(buf[:], uint64(last-first))
		binary.LittleEndian.PutUint64(buf[8:], uint64(calls))
		return 0, world.Send(buf[:], 0, 8)
	}
	var sum time.Duration
	k := 0
	for r := 1; r < size; r++ {
		if _, err := world.Recv(buf[:], r, 8); err != nil {
			return 0, err
		}
		span, c := int64(binary.LittleEndian.Uint64(buf[:])), int64(binary.LittleEndian.Uint64(buf[8:]))
		if c >= 2 {
			sum += time.Duration(span / (c - 1))
			k++
		}
	}
	if k == 0 {
		return 0, nil
	}
	return sum / time.Duration(k), nil
}
