package coll

import (
	"encoding/binary"
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// A frame is one MPI message on the private communicator: a wire.Header in
// the first wire.HeaderSize bytes, then the payload (see package wire).
// Sending header and payload as one message lets the receiver size it with
// MPI_Probe/MPI_Get_count and receive it whole, malformed or not.

// SendFrame sends buf (a frame: a header filled by wire.Header.Put, then
// its payload) to dest as one message. A frame longer than wire.MaxBytes is
// a *wire.Error and nothing is sent; any other error is an MPI failure.
func (k *Coll) SendFrame(dest, tag int, buf []byte) error {
	if err := checkFrameLen(buf); err != nil {
		return err
	}
	return mpi.Send(k.Comm, buf, dest, tag)
}

// checkFrameLen refuses a frame longer than wire.MaxBytes or shorter than
// its header.
func checkFrameLen(buf []byte) error {
	if int64(len(buf)) > wire.MaxBytes || len(buf) < wire.HeaderSize {
		return &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("frame of %d bytes outside [%d, %d]", len(buf), wire.HeaderSize, wire.MaxBytes)}
	}
	return nil
}

// Sending is a frame on its way out: a nonblocking send started by
// StartFrame. Its frame must stay referenced and unmodified until Done
// reports true.
type Sending struct{ req mpi.Request }

// StartFrame starts sending buf (a frame, as for SendFrame) to dest
// without waiting for a matching receive: a coordinator that must keep
// receiving while its frame travels (two ranks whose frames exceed the
// MPI's eager limit and that send to each other at once would otherwise
// both wait in MPI_Send for ever) starts it here and tests it with Done.
func (k *Coll) StartFrame(dest, tag int, buf []byte) (Sending, error) {
	if err := checkFrameLen(buf); err != nil {
		return Sending{}, err
	}
	r, err := mpi.Isend(k.Comm, buf, dest, tag)
	return Sending{req: r}, err
}

// StartBody starts sending buf, raw bytes that follow a frame (a segment of
// a segmented frame: no header), to dest with tag, as StartFrame does. An
// empty buf is refused: a body always carries bytes.
func (k *Coll) StartBody(dest, tag int, buf []byte) (Sending, error) {
	if len(buf) == 0 || int64(len(buf)) > wire.MaxBytes {
		return Sending{}, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("body of %d bytes outside [1, %d]", len(buf), wire.MaxBytes)}
	}
	r, err := mpi.Isend(k.Comm, buf, dest, tag)
	return Sending{req: r}, err
}

// RecvBody receives the next message from src with tag, which should hold
// exactly len(buf) bytes, into buf. A message of another size is still
// received whole (into a new buffer of its size, so that its sender is
// released) and reported as a *wire.Error; any other error is an MPI
// failure.
func (k *Coll) RecvBody(src, tag int, buf []byte) error {
	st, err := mpi.Probe(k.Comm, src, tag)
	if err != nil {
		return err
	}
	if st.Count != len(buf) {
		if _, err := mpi.Recv(k.Comm, make([]byte, max(st.Count, 0)), src, tag); err != nil {
			return err
		}
		return &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("body of %d bytes, expected %d", st.Count, len(buf))}
	}
	rs, err := mpi.Recv(k.Comm, buf, src, tag)
	if err == nil && rs.Count != len(buf) {
		err = &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("received a body of %d bytes, expected %d", rs.Count, len(buf))}
	}
	return err
}

// Done reports whether the send has completed (driving MPI's progress);
// once it has, the frame's memory is the caller's again.
func (s *Sending) Done() (bool, error) { return mpi.Test(&s.req) }

// RecvFrame receives the next frame from src (a rank, or mpi.AnySource())
// with tag. It probes the message, checks its size, receives it whole (so
// its sender never stays blocked, even when the frame is malformed), then
// parses the header and checks that the announced payload length matches.
// It returns the header, the payload (aliasing the received buffer) and the
// sender's rank. A malformed frame yields a *wire.Error (the message has been
// consumed) and a header holding at least the raw slot field; any other
// error is an MPI failure.
//
// The message size comes from MPI_Get_count, which MPI itself bounds by the
// bytes actually sent (at most an int count), never from a header field, so
// a forged header cannot make the receiver allocate more than the sender
// sent. A message larger than wire.MaxBytes (possible only when a test
// lowers it) is still received, to release its sender, and reported as
// wire.ErrLength.
func (k *Coll) RecvFrame(src, tag int) (wire.Header, []byte, int, error) {
	return k.RecvFrameTail(src, tag, 0)
}

// AwaitFrame is RecvFrame from src, waiting politely for the frame to
// arrive (MPI_Iprobe paced like a control collective, WaitPolite) instead
// of in a blocking MPI_Probe, which spins inside MPI (or, under Open MPI
// on an oversubscribed node, yields between polls of a TCP connection and
// may answer milliseconds late). For a frame that follows soon after a
// collective every rank has passed, such as Pmap's first READYs.
func (k *Coll) AwaitFrame(src, tag int) (wire.Header, []byte, int, error) {
	b := Backoff{spin: collectiveSpin}
	for {
		ok, _, err := mpi.Iprobe(k.Comm, src, tag)
		if err != nil {
			return wire.Header{}, nil, -1, err
		}
		if ok {
			return k.RecvFrame(src, tag)
		}
		b.Wait(true, nil, nil)
	}
}

// RecvFrameTail is RecvFrame for frames whose payload may end with tail
// bytes after its items (a Pmap RESULT's timing trailer): the buffer is
// placed by FrameBufferTail, so a bulk value is aligned as in a frame
// without them.
func (k *Coll) RecvFrameTail(src, tag, tail int) (wire.Header, []byte, int, error) {
	st, err := mpi.Probe(k.Comm, src, tag)
	if err != nil {
		return wire.Header{}, nil, -1, err
	}
	if st.Count < 0 {
		return wire.Header{}, nil, st.Source, fmt.Errorf("MPI_Get_count reported %d bytes", st.Count)
	}
	buf := FrameBufferTail(st.Count, tail)
	rs, err := mpi.Recv(k.Comm, buf, st.Source, st.Tag)
	if err != nil {
		return wire.Header{}, nil, st.Source, err
	}
	// The slot field is read from the raw bytes, so that a frame whose
	// header fails to parse can still be attributed to its sender's slot.
	var raw wire.Header
	if len(buf) >= wire.HeaderSize {
		raw.Slot = binary.LittleEndian.Uint32(buf[24:])
	}
	if rs.Source != st.Source || rs.Tag != st.Tag || rs.Count != st.Count {
		return raw, nil, st.Source, &wire.Error{Kind: wire.ErrSource, Detail: fmt.Sprintf(
			"probed (source %d, tag %d, %d bytes), received (source %d, tag %d, %d bytes)",
			st.Source, st.Tag, st.Count, rs.Source, rs.Tag, rs.Count)}
	}
	if src != mpi.AnySource() && rs.Source != src {
		return raw, nil, rs.Source, &wire.Error{Kind: wire.ErrSource, Detail: fmt.Sprintf("frame from rank %d, expected %d", rs.Source, src)}
	}
	if int64(st.Count) > wire.MaxBytes {
		return raw, nil, st.Source, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("frame of %d bytes exceeds limit %d", st.Count, wire.MaxBytes)}
	}
	h, err := wire.ParseHeader(buf)
	if err != nil {
		return raw, nil, st.Source, err
	}
	if h.Len != uint64(st.Count-wire.HeaderSize) {
		return h, nil, st.Source, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("header announces %d payload bytes, frame carries %d", h.Len, st.Count-wire.HeaderSize)}
	}
	return h, buf[wire.HeaderSize:], st.Source, nil
}

// IndexBytes is the size of one raw item index in a Pmap TASK or RESULT
// (the first thing of its payload): FrameBuffer places a frame after it.
const IndexBytes = 8

// FrameBuffer returns a new buffer for receiving a frame of n bytes, placed
// (wire.AlignPad) so that the data of the first bulk value of a Pmap TASK
// or RESULT is 8-byte aligned, so wire.DecodeItemsOwned can alias it
// instead of copying it. The placement is exact for a one-item frame
// (batch size 1): the value follows the header and one 8-byte index. For
// more items the bin header's size is a guess from the payload size, right
// whenever the first value's data exceeds 64 KiB; otherwise the value may
// be copied, which is correct too, and cheap at that size.
func FrameBuffer(n int) []byte { return FrameBufferTail(n, 0) }

// FrameBufferTail is FrameBuffer for a frame whose payload ends with tail
// bytes that follow its items (a Pmap RESULT's timing trailer): they are
// left out of the guess of the first value's size.
func FrameBufferTail(n, tail int) []byte {
	const off = wire.HeaderSize + IndexBytes
	pad := wire.AlignPad(off, n-off-tail)
	return make([]byte, pad+n)[pad:]
}

// Iprobe reports whether a message with tag is waiting from any source, and
// from which rank. On a miss it probes once more: Open MPI's ob1 (and
// MPICH) try to match before they progress the transport, so the first
// MPI_Iprobe after the coordinator slept misses a message that arrived
// meanwhile and only the second sees it; without this, detecting it cost a
// second back-off sleep (READY to TASK took about 260 µs instead of about
// 105 µs here).
func (k *Coll) Iprobe(tag int) (bool, int, error) {
	for range 2 {
		ok, st, err := mpi.Iprobe(k.Comm, mpi.AnySource(), tag)
		if err != nil {
			return false, -1, err
		}
		if ok {
			return true, st.Source, nil
		}
	}
	return false, -1, nil
}

// A split frame is two MPI messages from the same sender: the head (a
// wire.Header, then the start of the payload) with tag headTag, then the
// body (the rest of the payload, possibly empty) with tag headTag+1. The
// body is always sent, even when empty, so a receiver receives exactly two
// messages whatever the head says, and a bulk value's body goes from the
// sender's slice into the receiver's new slice with no copy on either side
// (see wire.SplitValue). The data collectives use split frames.

// SplitFrame encodes v as a split frame with header h (Len filled in).
func SplitFrame[T any](h wire.Header, v T) (head, body []byte, err error) {
	head, body, err = wire.SplitValue(make([]byte, wire.HeaderSize, wire.HeaderSize+8), v)
	if err != nil {
		return nil, nil, err
	}
	h.Len = uint64(len(head) - wire.HeaderSize + len(body))
	h.Put(head)
	return head, body, nil
}

// SendSplit sends a split frame to dest. Errors are MPI failures.
func (k *Coll) SendSplit(dest, headTag int, head, body []byte) error {
	if err := mpi.Send(k.Comm, head, dest, headTag); err != nil {
		return err
	}
	return mpi.Send(k.Comm, body, dest, headTag+1)
}

// RecvSplit receives a split frame from src: both messages, always, sized
// by MPI_Probe, the body straight into a new T when T takes the bulk path.
// It then checks the header and the announced length and decodes the value.
// A malformed frame or payload yields a *wire.Error (both messages have
// been consumed); any other error is an MPI failure.
func RecvSplit[T any](k *Coll, src, headTag int) (wire.Header, T, error) {
	var zero T
	st, err := mpi.Probe(k.Comm, src, headTag)
	if err != nil {
		return wire.Header{}, zero, err
	}
	head := make([]byte, max(st.Count, 0))
	if _, err := mpi.Recv(k.Comm, head, st.Source, headTag); err != nil {
		return wire.Header{}, zero, err
	}
	bst, err := mpi.Probe(k.Comm, st.Source, headTag+1)
	if err != nil {
		return wire.Header{}, zero, err
	}
	v, body := wire.BodyBuffer[T](bst.Count)
	if _, err := mpi.Recv(k.Comm, body, st.Source, headTag+1); err != nil {
		return wire.Header{}, zero, err
	}
	if total := int64(len(head)) + int64(len(body)); total > wire.MaxBytes {
		return wire.Header{}, zero, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("frame of %d bytes exceeds limit %d", total, wire.MaxBytes)}
	}
	h, err := wire.ParseHeader(head)
	if err != nil {
		return wire.Header{}, zero, err
	}
	if h.Len != uint64(len(head)-wire.HeaderSize+len(body)) {
		return h, zero, &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf(
			"header announces %d payload bytes, frame carries %d", h.Len, len(head)-wire.HeaderSize+len(body))}
	}
	v, err = wire.JoinValue(head[wire.HeaderSize:], v, body)
	return h, v, err
}
