package sched

// Worker is the lane state machine a non-root rank keeps for itself:
//
//	Idle -> ReadySent -> Running -> ResultSent -> Idle
//	Idle -> ReadySent -> StopReceived -> Drained
//
// Each method is one step; a step that the protocol does not allow in the
// current state returns a protocol error and changes nothing. Batch ids
// received in TASKs must strictly increase.
type Worker struct {
	rank   int
	state  State
	batch  int64 // id of the running batch
	lastID int64 // last TASK id seen, -1 before the first
	// counters for instrumentation
	tasks, results, stops, drains int
}

// NewWorker returns rank's machine in state Idle.
func NewWorker(rank int) *Worker { return &Worker{rank: rank, lastID: -1} }

// State returns the current state.
func (w *Worker) State() State { return w.state }

// Batch returns the id of the running batch (valid while Running).
func (w *Worker) Batch() int64 { return w.batch }

// Counts returns how many TASKs, RESULTs, STOPs and DRAINs the lane has seen.
func (w *Worker) Counts() (tasks, results, stops, drains int) {
	return w.tasks, w.results, w.stops, w.drains
}

func (w *Worker) step(op string, from, to State) error {
	if w.state != from {
		return protoErr(op, w.rank, "lane is %v, want %v", w.state, from)
	}
	w.state = to
	return nil
}

// SendReady records the READY sent to the root.
func (w *Worker) SendReady() error { return w.step("SendReady", Idle, ReadySent) }

// OnTask records a TASK with batch id; ids must strictly increase.
func (w *Worker) OnTask(id int64) error {
	if w.state != ReadySent {
		return protoErr("OnTask", w.rank, "lane is %v, want ReadySent", w.state)
	}
	if id <= w.lastID {
		return protoErr("OnTask", w.rank, "batch id %d after %d", id, w.lastID)
	}
	w.state, w.batch, w.lastID = Running, id, id
	w.tasks++
	return nil
}

// SendResult records the RESULT of the running batch; the lane is Idle
// again afterwards.
func (w *Worker) SendResult() error {
	if err := w.step("SendResult", Running, ResultSent); err != nil {
		return err
	}
	w.results++
	w.state = Idle
	return nil
}

// OnStop records the STOP that answered the READY.
func (w *Worker) OnStop() error {
	if err := w.step("OnStop", ReadySent, StopReceived); err != nil {
		return err
	}
	w.stops++
	return nil
}

// SendDrain records the DRAIN sent after STOP.
func (w *Worker) SendDrain() error {
	if err := w.step("SendDrain", StopReceived, Drained); err != nil {
		return err
	}
	w.drains++
	return nil
}
