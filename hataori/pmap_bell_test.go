//go:build mpirt || mpicgo

package hataori

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// TestBellTail: a TASK with the root's bell appended says so in its
// Status, its payload ends with the reference, and splitBell returns the
// reference and the payload as it was; a payload shorter than the tail is
// a truncated frame.
func TestBellTail(t *testing.T) {
	plain, err := taskFrame(nil, 7, 40, []int{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	plain = append([]byte(nil), plain...)
	ref := coll.BellRef{PID: 4242, FD: 9, Host: 0xfeed, Nonce: 0xc0ffee}
	framed := appendBell(append([]byte(nil), plain...), ref)
	checkTailHeader(t, framed, taskBell, 3)
	got, rest, err := splitBell(framed[wire.HeaderSize:])
	if err != nil {
		t.Fatal(err)
	}
	if got != ref || !bytes.Equal(rest, plain[wire.HeaderSize:]) {
		t.Fatalf("splitBell: %+v, %d bytes; want %+v, %d bytes", got, len(rest), ref, len(plain)-wire.HeaderSize)
	}
	var we *wire.Error
	if _, _, err := splitBell(make([]byte, bellTail-1)); !errors.As(err, &we) || we.Kind != wire.ErrTruncated {
		t.Fatalf("short payload: %v", err)
	}
}

// TestRootBells: the root appends its bell to a rank's TASKs until that
// rank's READYs carry readyBell (which it strips), and waits on it once
// every other rank's do; without a bell nothing is appended or awaited.
func TestRootBells(t *testing.T) {
	b, err := coll.NewBell(1, 2)
	if err != nil {
		t.Skip(err) // no bell on this system
	}
	rb := rootBells{bell: b, rings: make([]bool, 3)}
	frame, _ := taskFrame(nil, 1, 0, []int{5})
	frame = append([]byte(nil), frame...)
	if got := rb.tail(1, append([]byte(nil), frame...)); len(got) != len(frame)+bellTail {
		t.Fatalf("TASK to a rank that does not ring: %d bytes, want %d", len(got), len(frame)+bellTail)
	}
	if st := rb.ready(1, statusOK|readyBell); st != statusOK || rb.all() {
		t.Fatalf("after rank 1: status %d, all %v", st, rb.all())
	}
	if got := rb.tail(1, frame); len(got) != len(frame) {
		t.Fatal("a bell appended for a rank that rings it")
	}
	rb.ready(1, statusOK|readyBell) // counted once
	if rb.ready(2, statusCanceled); rb.all() {
		t.Fatal("all, with rank 2 not ringing")
	}
	if rb.ready(2, statusCanceled|readyBell); !rb.all() {
		t.Fatal("not all, with ranks 1 and 2 ringing")
	}
	none := newRootBells(1)
	if none.bell != nil || none.all() || len(none.tail(0, frame)) != len(frame) || none.seq() != 0 {
		t.Fatal("world size one: a bell")
	}
}
