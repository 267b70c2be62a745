package hataori

import (
	"fmt"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// A split frame is two MPI messages from the same sender: the head (a
// wire.Header, then the start of the payload) with tag headTag, then the
// body (the rest of the payload, possibly empty) with tag headTag+1. The
// body is always sent, even when empty, so a receiver receives exactly two
// messages whatever the head says, and a bulk value's body goes from the
// sender's slice into the receiver's new slice with no copy on either side
// (see wire.SplitValue). The data collectives use split frames.

// splitFrame encodes v as a split frame with header h (Len filled in).
func splitFrame[T any](h wire.Header, v T) (head, body []byte, err error) {
	head, body, err = wire.SplitValue(make([]byte, wire.HeaderSize, wire.HeaderSize+8), v)
	if err != nil {
		return nil, nil, err
	}
	h.Len = uint64(len(head) - wire.HeaderSize + len(body))
	h.Put(head)
	return head, body, nil
}

// sendSplit sends a split frame to dest. Errors are MPI failures.
func (k *collective) sendSplit(dest, headTag int, head, body []byte) error {
	if err := mpi.Send(k.comm, head, dest, headTag); err != nil {
		return err
	}
	return mpi.Send(k.comm, body, dest, headTag+1)
}

// recvSplit receives a split frame from src: both messages, always, sized
// by MPI_Probe, the body straight into a new T when T takes the bulk path.
// It then checks the header and the announced length and decodes the value.
// A malformed frame or payload yields a *wire.Error (both messages have
// been consumed); any other error is an MPI failure.
func recvSplit[T any](k *collective, src, headTag int) (wire.Header, T, error) {
	var zero T
	st, err := mpi.Probe(k.comm, src, headTag)
	if err != nil {
		return wire.Header{}, zero, err
	}
	head := make([]byte, max(st.Count, 0))
	if _, err := mpi.Recv(k.comm, head, st.Source, headTag); err != nil {
		return wire.Header{}, zero, err
	}
	bst, err := mpi.Probe(k.comm, st.Source, headTag+1)
	if err != nil {
		return wire.Header{}, zero, err
	}
	v, body := wire.BodyBuffer[T](bst.Count)
	if _, err := mpi.Recv(k.comm, body, st.Source, headTag+1); err != nil {
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
