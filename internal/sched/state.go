package sched

// State is the logical state of one (rank, slot) pair.
type State uint8

// Slot states, in the order of the protocol.
const (
	// Idle: no READY outstanding and no batch running.
	Idle State = iota
	// ReadySent: READY sent (worker) or received and not yet answered.
	ReadySent
	// Running: a batch is assigned and its RESULT not yet processed.
	Running
	// StopReceived: STOP answered a READY; the slot takes no more work.
	// The rank's DRAIN is due once all its slots are StopReceived.
	StopReceived
	// Drained: the rank's DRAIN was sent/received; its slots take no
	// further part.
	Drained
)

var stateNames = [...]string{"Idle", "ReadySent", "Running", "StopReceived", "Drained"}

// String returns the state's name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(?)"
}

// Decision is the answer to a READY (or to a root dispatch).
type Decision uint8

const (
	// Assign hands the returned batch to the slot.
	Assign Decision = iota + 1
	// Stop tells the slot that no more work will come.
	Stop
	// Wait (open input only, see Config.Open) tells the engine that no
	// item is available yet but more may come: the slot stays Idle, and
	// the engine asks again (the READY, or the root's dispatch) once
	// Extend or CloseInput has changed what there is.
	Wait
)

// String returns the decision's name.
func (d Decision) String() string {
	switch d {
	case Assign:
		return "Assign"
	case Stop:
		return "Stop"
	case Wait:
		return "Wait"
	}
	return "Decision(?)"
}

// Batch is a contiguous run of input indices [Start, Start+Count).
type Batch struct {
	ID    int64
	Start int
	Count int
}

// End is one past the batch's last index.
func (b Batch) End() int { return b.Start + b.Count }

// Indices returns the batch's index sequence as int64, the wire form.
func (b Batch) Indices() []int64 {
	out := make([]int64, b.Count)
	for i := range out {
		out[i] = int64(b.Start + i)
	}
	return out
}
