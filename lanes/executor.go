package lanes

import (
	"context"

	"github.com/hataori/hataori-go/internal/seam"
)

// laneExec runs the slots of a collective call on the lanes of l: slot i
// is lane i, on its own locked OS thread, lent engine i; the coordinator
// runs on the calling goroutine while the lanes compute. It is the same
// lane engine as Run's (RunWithCoordinator), so MapInLanes and PmapLanes
// share one.
type laneExec[E any] struct{ l *Lanes[E] }

func (x laneExec[E]) Slots() int   { return x.l.Count() }
func (x laneExec[E]) Threads() int { return x.l.Count() }
func (laneExec[E]) Offloads() bool { return true }

// Run claims the lanes (ErrBusy when they are running), runs work(i) on
// lane i and coord on the calling goroutine, and joins every lane.
func (x laneExec[E]) Run(work func(slot int), coord func()) error {
	return x.l.run(context.Background(), func(lane int, _ E, _ *Control) error {
		work(lane)
		return nil
	}, func(*Control) error {
		coord()
		return nil
	})
}

// refusingExec is an executor that cannot be claimed (PmapLanes of nil
// lanes): the call fails in its preflight on this rank.
type refusingExec struct{ err error }

func (refusingExec) Slots() int                    { return 1 }
func (refusingExec) Threads() int                  { return 1 }
func (refusingExec) Offloads() bool                { return true }
func (r refusingExec) Run(func(int), func()) error { return r.err }

var _ seam.Executor = laneExec[int]{}
