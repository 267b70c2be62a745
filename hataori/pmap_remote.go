package hataori

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/hataori/hataori-go/hataori/internal/errmsg"
	"github.com/hataori/hataori-go/hataori/internal/sched"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// runRemote runs a non-root rank's side of a call: READY, then a TASK to
// run (and its RESULT) or STOP (and DRAIN), until stopped.
func runRemote[T, U any](ctx context.Context, k *collective, exec Executor, f func(int, T) (U, error), root, batch int, rep *report) {
	w := sched.NewWorker(k.rank)
	lane := newBatchLane(exec, f)
	canceled := false
	var cancelErr error
	var scratch []byte // the last RESULT's memory, reused once its send has returned
	send := func(buf []byte) {
		if err := k.sendFrame(root, tagPmap, buf); err != nil {
			k.abortTransport(err)
		}
	}
	for {
		status := statusOK
		if !canceled {
			if err := ctx.Err(); err != nil {
				canceled, cancelErr = true, err
			}
		}
		if canceled {
			status = statusCanceled
		}
		step(k, w.SendReady())
		send(emptyFrame(wire.KindReady, status))
		k.waitMessage()
		h, payload, _, err := k.recvFrame(root, tagPmap)
		if err != nil {
			var we *wire.Error
			if errors.As(err, &we) {
				k.abortProtocol(fmt.Sprintf("malformed reply to READY from the root: %v", err))
			}
			k.abortTransport(err)
		}
		switch h.Kind {
		case wire.KindStop:
			step(k, w.OnStop())
			n, err := parseStop(payload)
			if err != nil {
				k.abortProtocol(fmt.Sprintf("STOP: %v", err))
			}
			step(k, w.SendDrain())
			send(emptyFrame(wire.KindDrain, statusOK))
			if canceled {
				rep.add(n, sched.ClassDrain, KindCanceled, fmt.Sprintf("rank %d: context done: %v", k.rank, cancelErr), cancelErr)
			}
			return
		case wire.KindTask:
			if h.BatchID > math.MaxInt64 {
				k.abortProtocol(fmt.Sprintf("TASK batch id %d", h.BatchID))
			}
			id := int64(h.BatchID)
			step(k, w.OnTask(id))
			buf := runTask(k, lane, h, id, payload, batch, rep, scratch)
			send(buf) // a blocking send: buf is free again when it returns
			scratch = buf
			step(k, w.SendResult())
		default:
			k.abortProtocol(fmt.Sprintf("%v in reply to READY", h.Kind))
		}
	}
}

// step aborts on a worker-machine protocol error (an internal failure).
func step(k *collective, err error) {
	if err != nil {
		k.abortProtocol(err.Error())
	}
}

// runTask decodes and runs one TASK and returns its RESULT frame, built in
// scratch's memory when it is large enough. The items are decoded from
// payload, which runTask owns: bulk items alias it. Errors (decode,
// callback, encode) are recorded in rep and turned into a failed RESULT, so
// the root stops assigning.
func runTask[T, U any](k *collective, lane *batchLane[T, U], h wire.Header, id int64, payload []byte, batch int, rep *report, scratch []byte) []byte {
	wireFault := func(indices []int64, taskKey int64, what string, err error) []byte {
		msg := fmt.Sprintf("rank %d: %s of batch %d: %v", k.rank, what, id, err)
		rep.add(taskKey, sched.ClassWire, KindWire, msg, err)
		return faultFrame(id, statusWire, indices, resultFault{Index: taskKey, Message: errmsg.Bound(msg)})
	}
	indices, rest, err := splitIndices(h, payload)
	if err != nil || len(indices) == 0 {
		if err == nil {
			err = &wire.Error{Kind: wire.ErrCount, Detail: "TASK without items"}
		}
		// The batch's first index follows from its id: batches are
		// consecutive runs of the fixed batch size.
		if id > math.MaxInt64/int64(batch) {
			k.abortProtocol(fmt.Sprintf("batch id %d overflows the task key", id))
		}
		return wireFault(nil, id*int64(batch), "decoding the TASK", err)
	}
	items, err := wire.DecodeItemsOwned[T](rest, len(indices))
	if err != nil {
		return wireFault(indices, indices[0], "decoding the items", err)
	}
	out := make([]U, len(items))
	lane.start(items, out)
	<-lane.done
	lane.finish(k)
	if lane.errIdx >= 0 {
		i, uerr := indices[lane.errIdx], lane.err
		lane.err = nil
		msg := errmsg.Bound(uerr.Error())
		rep.add(i, sched.ClassUser, KindUser, msg, uerr)
		return faultFrame(id, statusUser, indices, resultFault{Index: i, Message: msg})
	}
	buf, err := resultFrame(scratch, id, indices, out)
	if err != nil {
		return wireFault(indices, indices[0], "encoding the results", err)
	}
	return buf
}
