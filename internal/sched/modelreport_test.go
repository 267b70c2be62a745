package sched

import (
	"fmt"
	"testing"
	"time"
)

// TestModelReport prints (with -v) what the automatic policy reaches in
// the model with this machine's per-message costs: a remote round trip of
// 40–80 µs of overhead per batch, a root hand-off of 0.5 µs, items of 2 µs
// and 20 µs, 2 and 4 ranks of one slot. It also requires the modelled
// overhead share to stay near the target (at most twice
// 1/OverheadShare, for the start and the tail) and efficiency ≥ 0.90.
func TestModelReport(t *testing.T) {
	for _, c := range []struct {
		items int
		cost  time.Duration
	}{{100000, 2 * time.Microsecond}, {20000, 20 * time.Microsecond}} {
		for _, ranks := range []int{2, 4} {
			for _, o := range []time.Duration{40 * time.Microsecond, 80 * time.Microsecond} {
				for _, batch := range []int{0, 1} {
					m := runModel(t, c.items, batch, uniform(ranks, c.cost, o))
					st := m.s.Stats()
					line := fmt.Sprintf("items %6d × %-4v ranks %d overhead %-4v batch %-4s: overhead share %5.3f efficiency %5.3f batches %6d",
						c.items, c.cost, ranks, o, map[int]string{0: "auto", 1: "1"}[batch], m.overheadShare(), m.efficiency(), st.Assigned)
					for r := range ranks {
						rs := st.RankSizes[r]
						line += fmt.Sprintf(" | r%d %d/%d/%d", r, rs.Min, rs.Median, rs.Max)
					}
					t.Log(line)
					if batch == 0 && (m.overheadShare() > 2.0/OverheadShare || m.efficiency() < 0.90) {
						t.Errorf("%s: outside the policy's target", line)
					}
				}
			}
		}
	}
}
