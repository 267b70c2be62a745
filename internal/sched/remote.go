package sched

// Remote is the state machine a non-root rank keeps for its own slots.
// Every slot follows
//
//	Idle -> ReadySent -> Running -> Idle
//	Idle -> ReadySent -> StopReceived
//
// independently, and the rank sends one DRAIN, after which every slot is
// Drained, once all its slots are StopReceived.
//
// Each method is one step; a step that the protocol does not allow in the
// current state (or names an invalid slot) returns a protocol error and
// changes nothing. The root answers READYs in assignment order over one
// ordered channel, so the batch ids received in TASKs must strictly
// increase across the whole rank, whichever slots they go to.
type Remote struct {
	rank    int
	slots   []remoteSlot
	lastID  int64 // last TASK id seen by any slot, -1 before the first
	drained bool
}

type remoteSlot struct {
	state State
}

// NewRemote returns rank's machine with slots slots, all Idle. A machine
// built with slots < 1 has no slots: every step returns a protocol error.
func NewRemote(rank, slots int) *Remote {
	return &Remote{rank: rank, lastID: -1, slots: make([]remoteSlot, max(slots, 0))}
}

func (w *Remote) slot(op string, slot int, want State) (*remoteSlot, error) {
	if slot < 0 || slot >= len(w.slots) {
		return nil, slotErr(op, w.rank, slot, "slot outside [0,%d)", len(w.slots))
	}
	ws := &w.slots[slot]
	if ws.state != want {
		return nil, slotErr(op, w.rank, slot, "slot is %v, want %v", ws.state, want)
	}
	return ws, nil
}

// SendReady records the READY slot sent to the root.
func (w *Remote) SendReady(slot int) error {
	ws, err := w.slot("SendReady", slot, Idle)
	if err != nil {
		return err
	}
	ws.state = ReadySent
	return nil
}

// OnTask records a TASK with batch id for slot; ids must strictly
// increase across the rank.
func (w *Remote) OnTask(slot int, id int64) error {
	ws, err := w.slot("OnTask", slot, ReadySent)
	if err != nil {
		return err
	}
	if id <= w.lastID {
		return slotErr("OnTask", w.rank, slot, "batch id %d after %d", id, w.lastID)
	}
	ws.state, w.lastID = Running, id
	return nil
}

// SendResult records the RESULT of slot's running batch; the slot is Idle
// again afterwards.
func (w *Remote) SendResult(slot int) error {
	ws, err := w.slot("SendResult", slot, Running)
	if err != nil {
		return err
	}
	ws.state = Idle
	return nil
}

// OnStop records the STOP that answered slot's READY.
func (w *Remote) OnStop(slot int) error {
	ws, err := w.slot("OnStop", slot, ReadySent)
	if err != nil {
		return err
	}
	ws.state = StopReceived
	return nil
}

// Stopped reports whether every slot is StopReceived (the DRAIN is due)
// or the rank has drained already. A worker without slots never stops.
func (w *Remote) Stopped() bool {
	if w.drained {
		return true
	}
	return len(w.slots) > 0 && w.firstNotStopped() < 0
}

// firstNotStopped returns the first slot that is not StopReceived, or -1.
func (w *Remote) firstNotStopped() int {
	for j, ws := range w.slots {
		if ws.state != StopReceived {
			return j
		}
	}
	return -1
}

// SendDrain records the rank's single DRAIN, sent once every slot is
// StopReceived; every slot is Drained afterwards.
func (w *Remote) SendDrain() error {
	switch {
	case w.drained:
		return protoErr("SendDrain", w.rank, "rank already drained")
	case len(w.slots) == 0:
		return protoErr("SendDrain", w.rank, "worker has no slots")
	}
	if j := w.firstNotStopped(); j >= 0 {
		return slotErr("SendDrain", w.rank, j, "slot is %v, want StopReceived", w.slots[j].state)
	}
	for j := range w.slots {
		w.slots[j].state = Drained
	}
	w.drained = true
	return nil
}
