package hataori

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

// sendFrame sends buf (a frame: a header filled by wire.Header.Put, then
// its payload) to dest as one message. A frame longer than wire.MaxBytes is
// a *wire.Error and nothing is sent; any other error is an MPI failure.
func (k *collective) sendFrame(dest, tag int, buf []byte) error {
	if int64(len(buf)) > wire.MaxBytes || len(buf) < wire.HeaderSize {
		return &wire.Error{Kind: wire.ErrLength, Detail: fmt.Sprintf("frame of %d bytes outside [%d, %d]", len(buf), wire.HeaderSize, wire.MaxBytes)}
	}
	return mpi.Send(k.comm, buf, dest, tag)
}

// recvFrame receives the next frame from src (a rank, or mpi.AnySource())
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
func (k *collective) recvFrame(src, tag int) (wire.Header, []byte, int, error) {
	st, err := mpi.Probe(k.comm, src, tag)
	if err != nil {
		return wire.Header{}, nil, -1, err
	}
	if st.Count < 0 {
		return wire.Header{}, nil, st.Source, fmt.Errorf("MPI_Get_count reported %d bytes", st.Count)
	}
	buf := frameBuffer(st.Count)
	rs, err := mpi.Recv(k.comm, buf, st.Source, st.Tag)
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

// frameBuffer returns a new buffer for receiving a frame of n bytes, placed
// (wire.AlignPad) so that the data of the first bulk value of a Pmap TASK
// or RESULT is 8-byte aligned, so wire.DecodeItemsOwned can alias it
// instead of copying it. The placement is exact for a one-item frame
// (batch size 1): the value follows the header and one 8-byte index. For
// more items the bin header's size is a guess from the payload size, right
// whenever the first value's data exceeds 64 KiB; otherwise the value may
// be copied, which is correct too, and cheap at that size.
func frameBuffer(n int) []byte {
	const off = wire.HeaderSize + indexBytes
	pad := wire.AlignPad(off, n-off)
	return make([]byte, pad+n)[pad:]
}

// iprobe reports whether a message with tag is waiting from any source, and
// from which rank. On a miss it probes once more: Open MPI's ob1 (and
// MPICH) try to match before they progress the transport, so the first
// MPI_Iprobe after the coordinator slept misses a message that arrived
// meanwhile and only the second sees it; without this, detecting it cost a
// second back-off sleep (READY to TASK took about 260 µs instead of about
// 105 µs here).
func (k *collective) iprobe(tag int) (bool, int, error) {
	for range 2 {
		ok, st, err := mpi.Iprobe(k.comm, mpi.AnySource(), tag)
		if err != nil {
			return false, -1, err
		}
		if ok {
			return true, st.Source, nil
		}
	}
	return false, -1, nil
}
