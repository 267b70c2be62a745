package hataori

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// checkTailHeader checks the header of frame, a TASK of count items
// with a tail appended (appendTail): flag set, the count kept, the length
// the frame's.
func checkTailHeader(t *testing.T, frame []byte, flag uint8, count uint32) {
	t.Helper()
	h, err := wire.ParseHeader(frame)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status&flag == 0 || h.Count != count || int(h.Len) != len(frame)-wire.HeaderSize {
		t.Fatalf("header %+v for a %d-byte frame", h, len(frame))
	}
}

// TestGrantTableRoundTrip: a TASK with a grant table keeps its items and
// indices (splitGrants leaves the payload as it was) and gives back
// the table; a truncated or inflated table is a *wire.Error.
func TestGrantTableRoundTrip(t *testing.T) {
	frame := frameSpace(nil, 3*indexBytes+5)
	putIndexRange(frame, 40, 3)
	copy(frame[wire.HeaderSize+3*indexBytes:], "items")
	frame = sealFrame(frame, wire.Header{Kind: wire.KindTask, BatchID: 7}, 3)
	plain := slices.Clone(frame[wire.HeaderSize:])
	want := grantTail{size: 1 << 16, pid: 4242, hostKey: 99, nonceAddr: 0x1000, nonce: 5, addrs: []uint64{0x2000, 0x3000}}
	frame = appendGrants(frame, want)
	checkTailHeader(t, frame, taskGrants, 3)
	got, rest, err := splitGrants(frame[wire.HeaderSize:])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rest, plain) || got.size != want.size || got.pid != want.pid || got.hostKey != want.hostKey ||
		got.nonceAddr != want.nonceAddr || got.nonce != want.nonce || !slices.Equal(got.addrs, want.addrs) {
		t.Fatalf("got %+v and %d bytes, want %+v and %d", got, len(rest), want, len(plain))
	}
	var we *wire.Error
	if _, _, err := splitGrants(frame[wire.HeaderSize : wire.HeaderSize+10]); !errors.As(err, &we) {
		t.Errorf("truncated table: %v", err)
	}
	bad := slices.Clone(frame[wire.HeaderSize:])
	binary.LittleEndian.PutUint64(bad[len(bad)-8:], 1<<40)
	if _, _, err := splitGrants(bad); !errors.As(err, &we) {
		t.Errorf("table announcing 2^40 grants: %v", err)
	}
}

// TestSegmentTablePlaced: a placed segment's table entry gives its
// length and grant; an unplaced one -1.
func TestSegmentTablePlaced(t *testing.T) {
	p := make([]byte, 8+32+100)
	binary.LittleEndian.PutUint64(p, 2)
	binary.LittleEndian.PutUint64(p[8:], 0)
	binary.LittleEndian.PutUint64(p[16:], 5000|placedBit|3<<placedShift)
	binary.LittleEndian.PutUint64(p[24:], 10)
	binary.LittleEndian.PutUint64(p[32:], 7000)
	offs, lens, placed, rest, err := segmentTable(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(offs, []int{0, 10}) || !slices.Equal(lens, []int{5000, 7000}) || !slices.Equal(placed, []int{3, -1}) || len(rest) != 100 {
		t.Fatalf("offs %v lens %v placed %v rest %d", offs, lens, placed, len(rest))
	}
}

// TestPlaceRefusesAnotherHost: grants naming another host, a process
// whose memory does not hold the nonce, or the rank itself are not
// written into; the RESULT says so
// (resultUnplaceable) and keeps every body to send.
func TestPlaceRefusesAnotherHost(t *testing.T) {
	nonce := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	for _, tail := range []grantTail{
		{size: 8, pid: os.Getppid(), hostKey: hostKey() + 1, nonce: 1, addrs: []uint64{1}},
		{size: 8, pid: os.Getppid(), hostKey: hostKey(), nonceAddr: addrOf(nonce), nonce: 9, addrs: []uint64{1}},
		{size: 8, pid: os.Getpid(), hostKey: hostKey(), nonceAddr: addrOf(nonce), nonce: binary.LittleEndian.Uint64(nonce), addrs: []uint64{1}},
	} {
		var p remotePlacer
		frame := make([]byte, wire.HeaderSize+8+16)
		bodies := [][]byte{make([]byte, 8)}
		if got := p.place(tail, frame, bodies); len(got) != 1 || frame[2]&resultUnplaceable == 0 {
			t.Errorf("%+v: %d bodies left, status %#x", tail, len(got), frame[2])
		}
	}
}

// TestWriteToReadFrom: process_vm_writev and readv move exactly the bytes
// asked for (here within this process).
func TestWriteToReadFrom(t *testing.T) {
	if runtime.GOOS != "linux" {
		if writeTo(os.Getpid(), 0, []byte{1}) == nil {
			t.Fatal("writeTo succeeded without process_vm_writev")
		}
		return
	}
	src := []byte("sender-side placement")
	dst := make([]byte, len(src)+2)
	if err := writeTo(os.Getpid(), uintptr(addrOf(dst))+1, src); err != nil {
		t.Skipf("process_vm_writev not permitted here: %v", err)
	}
	if string(dst[1:len(dst)-1]) != string(src) || dst[0] != 0 || dst[len(dst)-1] != 0 {
		t.Fatalf("wrote %q", dst)
	}
	back := make([]byte, len(src))
	if err := readFrom(os.Getpid(), uintptr(addrOf(dst))+1, back); err != nil || string(back) != string(src) {
		t.Fatalf("read %q, %v", back, err)
	}
	if err := writeTo(os.Getpid(), 8, src); err == nil {
		t.Fatal("writing at address 8 succeeded")
	}
}
