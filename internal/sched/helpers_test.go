package sched

// Accessors that only the tests use; production code reads what it needs
// through the transitions' results and the methods in scheduler.go and
// remote.go.

// Config returns the configuration the scheduler was built with (Slots is
// a copy).
func (s *Scheduler) Config() Config {
	c := s.cfg
	c.Slots = append([]int(nil), s.cfg.Slots...)
	return c
}

// Ranks returns the world size.
func (s *Scheduler) Ranks() int { return len(s.slots) }

// Remaining returns how many indices are not yet assigned.
func (s *Scheduler) Remaining() int { return s.cfg.Items - s.next }

// Slots returns the number of slots.
func (w *Remote) Slots() int { return len(w.slots) }

// State returns the state of slot (Drained for an invalid slot).
func (w *Remote) State(slot int) State {
	if slot < 0 || slot >= len(w.slots) {
		return Drained
	}
	return w.slots[slot].state
}
