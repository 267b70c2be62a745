package main

// newAutoDealer builds the dealer of the scheduler's automatic batch sizes
// (sched.Config.BatchSize == 0, durations reported on completion). Until
// internal/sched has them it returns errNoAuto, and the sweep leaves the
// automatic policy out.
func newAutoDealer(items int, slots []int) (Dealer, error) {
	_, _ = items, slots
	return nil, errNoAuto
}
