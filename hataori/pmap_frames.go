package hataori

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// Pmap's scheduler messages travel on the call's private communicator with
// one tag. Payload schemas (after the wire.Header):
//
//	READY   empty; Status statusOK or statusCanceled, in a rank's first
//	        READY with readyPrefetchSlot set when its last logical slot is
//	        its prefetch slot (see rootLoop.holdReady), with readyBell set
//	        once the rank rings the root's bell (pmap_bell.go; wire
//	        version 8)
//	TASK    Count raw little-endian int64 input indices, then Count items
//	        (wire.EncodeItems); BatchID is the batch id; Status holds the
//	        taskStats and taskSpans flags (what the root wants measured)
//	        and taskGrants: then the payload ends with a grant table
//	        (grantTail, pmap_place.go; wire version 7), and taskBell: then
//	        it ends, after that, with the root's bell (bellTail,
//	        pmap_bell.go; wire version 8)
//	RESULT  Count raw indices echoed from the TASK, then for statusOK the
//	        Count results (wire.EncodeItems), for statusUser/statusWire one
//	        wireFault (wire.EncodeValue), for statusPartial (CollectAll)
//	        an 8-byte length L, L bytes of []wireFault (every failed item
//	        of the batch, in index order), then the results of the other
//	        items, in index order; every RESULT ends with a 16-byte
//	        trailer (resultTrailer): the batch's compute time and the
//	        TASK's queue wait on that rank, raw little-endian int64 ns
//	        (wire version 5; version 6: segmented RESULTs, resultSegmented;
//	        version 7: segments placed in the TASK's grants, placedBit)
//	STOP    8 raw bytes: the input length N (call-level error keys need it)
//	DRAIN   the rank's statistics: raw little-endian int64s (drainStats)
//	CANCEL  8 raw bytes, a little-endian int64: the lowest failing index
//	        the sender knows, or -1 (haltAll) for a call-level stop (wire
//	        version 5). From the root: the call is stopping (cancel the
//	        callbacks' context; under FailFast the running batches stop
//	        before their first item above the index); the root sends one
//	        when the call starts stopping and another each time the index
//	        it knows decreases, only to a rank with a slot it has not yet
//	        sent STOP, so the rank receives every one before its last STOP.
//	        From another rank: its context ended (always -1); it sends one
//	        at most, before its DRAIN.
const tagPmap = 1

// Frame status codes.
const (
	statusOK       uint8 = 0
	statusUser     uint8 = 1 // RESULT: a callback returned an error
	statusWire     uint8 = 2 // RESULT: the TASK or the results failed to decode/encode
	statusCanceled uint8 = 3 // READY: this rank's context ended
	statusPartial  uint8 = 4 // RESULT (CollectAll): some items failed, the others' results follow
)

// readyPrefetchSlot, in the Status byte of a rank's first READY, says
// that its last logical slot is the prefetch slot (one beyond its executor
// slots); the root strips it before reading the status.
const readyPrefetchSlot uint8 = 1 << 7

// resultTrailer is the size of the timing that ends every RESULT payload:
// compute ns, then queued ns (see putTiming, resultTiming).
const resultTrailer = 16

// zeroTrailer is the trailer a RESULT is built with, filled in by putTiming.
var zeroTrailer [resultTrailer]byte

// putTiming writes compute and queued into the trailer of frame, a RESULT
// built by resultFrame, faultFrame or partialFrame. No allocation.
func putTiming(frame []byte, compute, queued time.Duration) {
	p := frame[len(frame)-resultTrailer:]
	binary.LittleEndian.PutUint64(p, uint64(compute))
	binary.LittleEndian.PutUint64(p[8:], uint64(queued))
}

// resultTiming reads the trailer of a RESULT payload as sent (possibly
// negative or absurd: the root clamps them); ok is false when the payload
// is too short to hold one. No allocation.
func resultTiming(payload []byte) (compute, queued int64, ok bool) {
	if len(payload) < resultTrailer {
		return 0, 0, false
	}
	p := payload[len(payload)-resultTrailer:]
	return int64(binary.LittleEndian.Uint64(p)), int64(binary.LittleEndian.Uint64(p[8:])), true
}

// TASK flags, in the Status byte.
const (
	taskStats uint8 = 1 << 0 // measure the batch's busy time
	taskSpans uint8 = 1 << 1 // record the batch's span (CallStats.RecordSpans)
)

// wireFault is an item fault in its wire form, one failed item of a RESULT
// (a fault frame carries one, a partial RESULT a list): the failing input
// index (a batch's first index for a fault of the whole frame), its
// kind (KindUser or KindWire; KindCanceled for an item that failed with the
// call's cancellation) and the bounded message.
type wireFault struct {
	Index   int64  `msgpack:"i"`
	Kind    uint8  `msgpack:"k"`
	Message string `msgpack:"m"`
}

// indexBytes is the size of one raw index.
const indexBytes = coll.IndexBytes

// frameSpace returns a buffer of wire.HeaderSize+extra bytes for a frame,
// reusing dst's memory when it is large enough (a frame sent with a
// blocking send may be rebuilt in the same memory once the send returns;
// the payload encoder appends within its capacity too). Its contents are
// not cleared: the caller writes every byte.
func frameSpace(dst []byte, extra int) []byte {
	n := wire.HeaderSize + extra
	if cap(dst) < n {
		return make([]byte, n)
	}
	return dst[:n]
}

// putIndexRange writes the raw indices start … start+count-1 after the
// header space of buf.
func putIndexRange(buf []byte, start, count int) {
	p := buf[wire.HeaderSize:]
	for i := range count {
		binary.LittleEndian.PutUint64(p[indexBytes*i:], uint64(start+i))
	}
}

// sealFrame fills in h's Len (and Count) and writes it at the front of buf.
func sealFrame(buf []byte, h wire.Header, count int) []byte {
	h.Version = wire.Version
	h.Count = uint32(count)
	h.Len = uint64(len(buf) - wire.HeaderSize)
	h.Put(buf)
	return buf
}

// appendTail appends words (raw little-endian uint64s) to frame, a sealed
// frame, and reseals its header with flag set in its Status: the tails
// that TASKs carry after their items (appendGrants, appendBell).
func appendTail(frame []byte, flag uint8, words ...uint64) []byte {
	for _, v := range words {
		frame = binary.LittleEndian.AppendUint64(frame, v)
	}
	h, err := wire.ParseHeader(frame)
	if err != nil {
		panic(fmt.Sprintf("hataori: resealing a frame: %v", err))
	}
	h.Status |= flag
	return sealFrame(frame, h, int(h.Count))
}

// taskFrame builds the TASK of batch (id, start) carrying items, in dst's
// memory when it is large enough (dst may be nil). dst is scratch: its
// contents may be overwritten even when the frame outgrows it or fails to
// encode (then nothing is to be sent).
func taskFrame[T any](dst []byte, id int64, start int, items []T) ([]byte, error) {
	if err := countFits(len(items)); err != nil {
		return nil, err
	}
	buf := frameSpace(dst, indexBytes*len(items))
	putIndexRange(buf, start, len(items))
	buf, err := wire.EncodeItems(buf, items)
	if err == nil {
		err = frameFits(wire.KindTask, int64(len(buf)))
	}
	if err != nil {
		return nil, err
	}
	return sealFrame(buf, wire.Header{Kind: wire.KindTask, BatchID: uint64(id)}, len(items)), nil
}

// resultFrame builds a successful RESULT echoing indices, in dst's memory
// when it is large enough (dst may be nil): the results are encoded
// straight after the header and the indices, with at most one allocation
// when dst is too small. The data of each bulk result (or nested Bulk) of
// at least resultSegMin bytes is left out and returned in bodies, slices of
// the results' own memory that travel as messages of their own after the
// frame (segmentedFrame). dst is scratch, as for taskFrame.
func resultFrame[U any](dst []byte, id int64, indices []int64, out []U) (frame []byte, bodies [][]byte, err error) {
	return resultFrameMin(dst, id, indices, out, resultSegMin)
}

// resultFrameMin is resultFrame with segments of at least segMin bytes
// (0: none, every result in the frame).
func resultFrameMin[U any](dst []byte, id int64, indices []int64, out []U, segMin int) ([]byte, [][]byte, error) {
	if err := countFits(len(indices)); err != nil {
		return nil, nil, err
	}
	buf, segs, err := encodeResults(putIndices(frameSpace(dst, indexBytes*len(indices)), indices), out, segMin)
	if err != nil {
		return nil, nil, err
	}
	buf = append(buf, zeroTrailer[:]...)
	h := wire.Header{Kind: wire.KindResult, Status: statusOK, BatchID: uint64(id)}
	return segmentedFrame(buf, segs, h, len(indices))
}

// encodeResults appends results to buf, the data of bulk values of at
// least segMin bytes as segments (segMin 0: none).
func encodeResults[U any](buf []byte, results []U, segMin int) ([]byte, []wire.Segment, error) {
	if segMin == 0 {
		b, err := wire.EncodeItems(buf, results)
		return b, nil, err
	}
	return wire.EncodeItemsSegmented(buf, results, segMin)
}

// resultSegMin is the least bulk datum a RESULT sends from the result's
// own memory (a message of its own) instead of copying it into the frame.
const resultSegMin = 32 << 10

// resultSegmented, in a RESULT's Status byte, says that the frame is the
// head of a segmented RESULT: its payload starts with the segment table
// (a raw little-endian uint64 count S, then S pairs (offset, length): where
// each segment's data belongs in the rest of the payload, ascending, and
// its size), and S messages with tag tagPmap+1 follow from the same rank,
// one per segment, in order. The rest of the payload is the RESULT's usual
// payload without the segments' data (wire.EncodeItemsSegmented).
const resultSegmented uint8 = 1 << 6

// segmentedFrame seals buf (a RESULT frame without its header, whose
// payload lacks the data of segs) with h: as it is when segs is empty,
// else as the head of a segmented RESULT (a new buffer: the segment table,
// then buf's payload), returning the segments' data to send after it.
func segmentedFrame(buf []byte, segs []wire.Segment, h wire.Header, count int) ([]byte, [][]byte, error) {
	ext := 0
	for _, sg := range segs {
		ext += len(sg.Data)
	}
	if err := frameFits(wire.KindResult, int64(len(buf))+int64(ext)); err != nil {
		return nil, nil, err
	}
	if len(segs) == 0 {
		return sealFrame(buf, h, count), nil, nil
	}
	table := 8 + 16*len(segs)
	head := make([]byte, wire.HeaderSize+table, len(buf)+table)
	binary.LittleEndian.PutUint64(head[wire.HeaderSize:], uint64(len(segs)))
	bodies := make([][]byte, len(segs))
	for i, sg := range segs {
		p := head[wire.HeaderSize+8+16*i:]
		binary.LittleEndian.PutUint64(p, uint64(sg.Off-wire.HeaderSize))
		binary.LittleEndian.PutUint64(p[8:], uint64(len(sg.Data)))
		bodies[i] = sg.Data
	}
	head = append(head, buf[wire.HeaderSize:]...)
	h.Status |= resultSegmented
	return sealFrame(head, h, count), bodies, nil
}

// segmentTable reads the table at the front of a segmented RESULT's
// payload: the segments' offsets in the rest (ascending, within it), sizes
// (their sum within wire.PayloadLimit) and, for each, the grant the
// sending rank placed it in (placedBit; -1: it follows as a message), and
// that rest.
func segmentTable(payload []byte) (offs, lens, placed []int, rest []byte, err error) {
	bad := func(f string, a ...any) ([]int, []int, []int, []byte, error) {
		return nil, nil, nil, nil, &wire.Error{Kind: wire.ErrDecode, Detail: "segmented RESULT: " + fmt.Sprintf(f, a...)}
	}
	if len(payload) < 8 {
		return bad("no segment count in %d bytes", len(payload))
	}
	n := binary.LittleEndian.Uint64(payload)
	if n == 0 || n > uint64(len(payload)-8)/16 {
		return bad("%d segments in a %d-byte payload", n, len(payload))
	}
	rest = payload[8+16*n:]
	offs, lens, placed = make([]int, n), make([]int, n), make([]int, n)
	total, last := int64(0), uint64(0)
	for i := range offs {
		p := payload[8+16*i:]
		off, ln := binary.LittleEndian.Uint64(p), binary.LittleEndian.Uint64(p[8:])
		placed[i] = -1
		if ln&placedBit != 0 {
			placed[i] = int(ln &^ placedBit >> placedShift)
			ln &= placedLen
		}
		if off < last || off > uint64(len(rest)) || ln == 0 || ln > uint64(wire.PayloadLimit()) {
			return bad("segment %d at %d of %d bytes", i, off, ln)
		}
		if total += int64(ln); total > wire.PayloadLimit() {
			return bad("segments of %d bytes exceed limit %d", total, wire.PayloadLimit())
		}
		offs[i], lens[i], last = int(off), int(ln), off
	}
	return offs, lens, placed, rest, nil
}

// faultFrame builds a failed RESULT echoing indices. It cannot fail: a
// bounded message always encodes.
func faultFrame(id int64, status uint8, indices []int64, f wireFault) []byte {
	buf, err := wire.EncodeValue(rawIndices(indices), f)
	if err != nil {
		buf = rawIndices(indices)
	}
	buf = append(buf, zeroTrailer[:]...)
	return sealFrame(buf, wire.Header{Kind: wire.KindResult, Status: status, BatchID: uint64(id)}, len(indices))
}

// partialFrame builds a CollectAll RESULT of a batch in which the items
// faults name failed: indices, the faults, then results, the results of the
// other items in index order. dst is scratch, as for taskFrame.
func partialFrame[U any](dst []byte, id int64, indices []int64, faults []wireFault, results []U) ([]byte, [][]byte, error) {
	return partialFrameMin(dst, id, indices, faults, results, resultSegMin)
}

// partialFrameMin is partialFrame with segments of at least segMin bytes
// (0: none).
func partialFrameMin[U any](dst []byte, id int64, indices []int64, faults []wireFault, results []U, segMin int) ([]byte, [][]byte, error) {
	if err := countFits(len(indices)); err != nil {
		return nil, nil, err
	}
	buf := putIndices(frameSpace(dst, indexBytes*len(indices)+8), indices)
	at := len(buf) - 8
	buf, err := wire.EncodeValue(buf, faults)
	if err != nil {
		return nil, nil, err
	}
	binary.LittleEndian.PutUint64(buf[at:], uint64(len(buf)-at-8))
	buf, segs, err := encodeResults(buf, results, segMin)
	if err != nil {
		return nil, nil, err
	}
	buf = append(buf, zeroTrailer[:]...)
	h := wire.Header{Kind: wire.KindResult, Status: statusPartial, BatchID: uint64(id)}
	return segmentedFrame(buf, segs, h, len(indices))
}

// parsePartial splits the payload of a statusPartial RESULT after its
// indices into the faults and the encoded results. The faults must name
// distinct indices of the batch in increasing order.
func parsePartial(rest []byte, indices []int64) ([]wireFault, []byte, error) {
	if len(rest) < 8 {
		return nil, nil, &wire.Error{Kind: wire.ErrTruncated, Detail: "partial RESULT without its fault length"}
	}
	n := binary.LittleEndian.Uint64(rest)
	if n > uint64(len(rest)-8) {
		return nil, nil, &wire.Error{Kind: wire.ErrTruncated, Detail: fmt.Sprintf("partial RESULT announces %d fault bytes in %d", n, len(rest)-8)}
	}
	faults, err := wire.DecodeValue[[]wireFault](rest[8 : 8+n])
	if err != nil {
		return nil, nil, err
	}
	if len(faults) == 0 || len(faults) > len(indices) {
		return nil, nil, &wire.Error{Kind: wire.ErrCount, Detail: fmt.Sprintf("partial RESULT with %d faults for %d items", len(faults), len(indices))}
	}
	j := 0
	for _, f := range faults {
		for j < len(indices) && indices[j] < f.Index {
			j++
		}
		if j == len(indices) || indices[j] != f.Index {
			return nil, nil, &wire.Error{Kind: wire.ErrDecode, Detail: fmt.Sprintf("partial RESULT: fault for index %d outside the batch or out of order", f.Index)}
		}
		j++
	}
	return faults, rest[8+n:], nil
}

// withSlot writes slot s into the header of frame buf and returns buf.
func withSlot(buf []byte, s int) []byte {
	binary.LittleEndian.PutUint32(buf[24:], uint32(s))
	return buf
}

// readyFrame builds the READY of slot s of a rank with slots slots in all
// (the root learns a rank's slot count from its first READY).
func readyFrame(status uint8, s, slots int) []byte {
	return withSlot(sealFrame(make([]byte, wire.HeaderSize), wire.Header{Kind: wire.KindReady, Status: status}, slots), s)
}

// cancelFrame builds CANCEL carrying low, the lowest failing index the
// sender knows (haltAll: a call-level stop).
func cancelFrame(low int64) []byte {
	buf := make([]byte, wire.HeaderSize+8)
	binary.LittleEndian.PutUint64(buf[wire.HeaderSize:], uint64(low))
	return sealFrame(buf, wire.Header{Kind: wire.KindCancel}, 0)
}

// parseCancel returns the index a CANCEL payload carries: a failing
// index (≥ 0) or haltAll; any other negative value is refused.
func parseCancel(payload []byte) (int64, error) {
	if len(payload) != 8 {
		return 0, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("CANCEL payload of %d bytes, want 8", len(payload))}
	}
	v := int64(binary.LittleEndian.Uint64(payload))
	if v < haltAll {
		return 0, &wire.Error{Kind: wire.ErrDecode, Detail: fmt.Sprintf("CANCEL index %d", v)}
	}
	return v, nil
}

// drainFrame builds DRAIN carrying the rank's statistics.
func drainFrame(stats []int64) []byte {
	buf := frameSpace(nil, 8*len(stats))
	for i, v := range stats {
		binary.LittleEndian.PutUint64(buf[wire.HeaderSize+8*i:], uint64(v))
	}
	return sealFrame(buf, wire.Header{Kind: wire.KindDrain}, 0)
}

// parseInt64s reads a payload of raw little-endian int64s.
func parseInt64s(payload []byte) ([]int64, error) {
	if len(payload)%8 != 0 {
		return nil, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("%d bytes is not a whole number of int64s", len(payload))}
	}
	out := make([]int64, len(payload)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(payload[8*i:]))
	}
	return out, nil
}

// stopFrame builds STOP carrying the input length n.
func stopFrame(n int) []byte {
	buf := make([]byte, wire.HeaderSize+8)
	binary.LittleEndian.PutUint64(buf[wire.HeaderSize:], uint64(n))
	return sealFrame(buf, wire.Header{Kind: wire.KindStop}, 0)
}

// parseStop returns the input length carried by a STOP payload.
func parseStop(payload []byte) (int64, error) {
	if len(payload) != 8 {
		return 0, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("STOP payload of %d bytes, want 8", len(payload))}
	}
	n := binary.LittleEndian.Uint64(payload)
	if n > math.MaxInt64 {
		return 0, &wire.Error{Kind: wire.ErrOverflow, Detail: fmt.Sprintf("STOP input length %d", n)}
	}
	return int64(n), nil
}

// rawIndices returns a new frame buffer holding the header space and the
// raw indices.
func rawIndices(indices []int64) []byte {
	return putIndices(frameSpace(nil, indexBytes*len(indices)), indices)
}

// putIndices writes indices after the header space of buf, which holds
// exactly that many, and returns buf.
func putIndices(buf []byte, indices []int64) []byte {
	p := buf[wire.HeaderSize:]
	for i, ix := range indices {
		binary.LittleEndian.PutUint64(p[indexBytes*i:], uint64(ix))
	}
	return buf
}

// splitIndices reads the raw indices announced by h.Count from the front of
// payload and returns them with the rest of the payload (for a RESULT,
// without its timing trailer, read by resultTiming).
func splitIndices(h wire.Header, payload []byte) ([]int64, []byte, error) {
	if h.Kind == wire.KindResult {
		if len(payload) < resultTrailer {
			return nil, nil, &wire.Error{Kind: wire.ErrTruncated, Detail: fmt.Sprintf("RESULT payload of %d bytes has no %d-byte timing trailer", len(payload), resultTrailer)}
		}
		payload = payload[:len(payload)-resultTrailer]
	}
	n := uint64(h.Count)
	if n > uint64(len(payload))/indexBytes {
		return nil, nil, &wire.Error{Kind: wire.ErrTruncated, Detail: fmt.Sprintf("%v announces %d indices in a %d-byte payload", h.Kind, n, len(payload))}
	}
	out := make([]int64, n)
	for i := range out {
		v := binary.LittleEndian.Uint64(payload[indexBytes*i:])
		if v > math.MaxInt64 {
			return nil, nil, &wire.Error{Kind: wire.ErrOverflow, Detail: fmt.Sprintf("index %d does not fit int64", v)}
		}
		out[i] = int64(v)
	}
	return out, payload[indexBytes*n:], nil
}

// frameFits checks that a whole frame (header, raw indices and items) is
// within wire.MaxBytes. The item encoder bounds only the bytes it appends,
// so without this check the indices could push a frame past the limit and
// sendFrame would refuse it as a transport failure; an ErrLength here lets
// the caller fail the batch recoverably instead (STOP for a TASK, a wire
// fault for a RESULT).
func frameFits(kind wire.Kind, n int64) error {
	if n > wire.MaxBytes {
		return &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("%v frame of %d bytes exceeds limit %d", kind, n, wire.MaxBytes)}
	}
	return nil
}

func countFits(n int) error {
	if uint64(n) > math.MaxUint32 {
		return &wire.Error{Kind: wire.ErrCount, Detail: fmt.Sprintf("%d items exceed the frame count limit", n)}
	}
	return nil
}

// taskFreeMax bounds the TASK memory the root keeps for reuse.
const taskFreeMax = 4

// sendTask starts sending the TASK buf to rank to without waiting for it
// to complete (the root coordinator, like a remote one with its RESULTs,
// never waits in MPI_Send: on a core shared with a slot a blocking send
// waits, spinning on the core its slot computes on, until the other rank's
// coordinator, asleep while its slots compute, takes the message), and
// takes the next TASK's memory from those already sent. MPI keeps the
// order of one sender's messages, so a later STOP still follows it.
// Coordinator only.
func (r *rootLoop[T, U]) sendTask(to int, buf []byte) {
	tracef("send kind=TASK to=%d bytes=%d", to, len(buf))
	r.sent[to] += int64(len(buf))
	snd, err := r.k.StartFrame(to, tagPmap, buf)
	if err != nil {
		r.k.AbortTransport(err)
	}
	r.taskSends.Add(snd, buf, nil, nil)
	r.taskBuf = nil
	if n := len(r.taskFree); n > 0 {
		r.taskBuf, r.taskFree = r.taskFree[n-1], r.taskFree[:n-1]
	}
}

// reapTasks keeps the memory of the TASKs whose sends have completed.
func (r *rootLoop[T, U]) reapTasks() {
	if _, err := r.taskSends.Reap(r.reuseTask); err != nil {
		r.k.AbortTransport(err)
	}
}

// awaitTasks waits until every TASK sent has left (at the end of the loop:
// every rank has received its TASKs before it drained).
func (r *rootLoop[T, U]) awaitTasks() {
	if err := r.taskSends.Await(r.reuseTask); err != nil {
		r.k.AbortTransport(err)
	}
}

// reuseTask keeps the memory of a TASK that has left: as the next TASK's,
// or among at most taskFreeMax for later ones.
func (r *rootLoop[T, U]) reuseTask(buf []byte) {
	switch {
	case r.taskBuf == nil:
		r.taskBuf = buf
	case len(r.taskFree) < taskFreeMax:
		r.taskFree = append(r.taskFree, buf)
	}
}

// resultBodies is what the root received apart from a segmented RESULT's
// head: the segments, as the decoder takes them (wire.DecodeItemsSegments;
// none when they were received into the payload itself), every buffer
// received into (the results alias them: a stream with ReuseBuffers reuses
// them once its sink has had the batch), and how many segments the sending
// rank placed in the root's grants.
type resultBodies struct {
	segs   []wire.Segment
	bufs   [][]byte
	placed int
}

// apart is the bytes received in segments apart from the payload.
func (b resultBodies) apart() int {
	n := 0
	for _, sg := range b.segs {
		n += len(sg.Data)
	}
	return n
}

// from returns the segments with offsets relative to sub, a subslice of
// payload that ends where payload does (its capacity tells where it starts).
func (b resultBodies) from(payload, sub []byte) []wire.Segment {
	if len(b.segs) == 0 {
		return nil
	}
	base := cap(payload) - cap(sub)
	out := make([]wire.Segment, len(b.segs))
	for i, sg := range b.segs {
		out[i] = wire.Segment{Off: sg.Off - base, Data: sg.Data}
	}
	return out
}

// recvSegments receives the segments of a segmented RESULT from rank from,
// whose head's payload is payload, and returns the RESULT's usual payload
// (without the table). When U takes the bulk path each segment goes into a
// buffer of its own from alloc, which its result will alias, or is the
// grant the rank placed it in (grants: those of the RESULT's TASK);
// otherwise the payload is rebuilt in one buffer from alloc with each
// segment received (or copied from its grant) into place. A table that
// does not parse, or names a grant the TASK did not carry, aborts the job
// (its segments cannot be told apart from later messages); a segment of
// the wrong size is a *wire.Error once every segment has been received.
func recvSegments[U any](k *coll.Coll, from int, payload []byte, alloc func(int) []byte, grants [][]byte) ([]byte, resultBodies, error) {
	offs, lens, placed, rest, err := segmentTable(payload)
	if err != nil {
		k.AbortProtocol(fmt.Sprintf("RESULT from rank %d: %v", from, err))
	}
	var bodies resultBodies
	for i, g := range placed {
		if g < 0 {
			continue
		}
		if g >= len(grants) || lens[i] > len(grants[g]) {
			k.AbortProtocol(fmt.Sprintf("RESULT from rank %d: segment %d of %d bytes placed in grant %d of %d", from, i, lens[i], g, len(grants)))
		}
		bodies.placed++
	}
	var first error
	// recv fills buf with segment i: received, or copied from its grant.
	recv := func(i int, buf []byte) {
		if g := placed[i]; g >= 0 {
			copy(buf, grants[g])
			return
		}
		if err := k.RecvBody(from, tagPmap+1, buf); err != nil {
			var we *wire.Error
			if !errors.As(err, &we) {
				k.AbortTransport(err)
			}
			first = cmp.Or(first, err)
		}
	}
	if wire.BulkPath[U]() {
		for i, n := range lens {
			var buf []byte
			if g := placed[i]; g >= 0 {
				buf = grants[g][:n:n] // a placed segment is its grant
			} else {
				buf = alloc(n)
				recv(i, buf)
			}
			bodies.segs = append(bodies.segs, wire.Segment{Off: offs[i], Data: buf})
			bodies.bufs = append(bodies.bufs, buf)
		}
		return rest, bodies, first
	}
	total := len(rest)
	for _, n := range lens {
		total += n
	}
	full := alloc(total)
	at, prev := 0, 0
	for i, n := range lens {
		at += copy(full[at:], rest[prev:offs[i]])
		prev = offs[i]
		recv(i, full[at:at+n])
		at += n
	}
	copy(full[at:], rest[prev:])
	bodies.bufs = [][]byte{full}
	return full, bodies, first
}
