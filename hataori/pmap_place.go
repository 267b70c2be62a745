package hataori

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// Sender-side placement of bulk results. A remote result received into
// fresh memory costs the root's core the copy and, mostly, the page
// faults of that memory (docs/PERFORMANCE.md, "Pmap: large results"),
// whichever MPI protocol moves it. When the result type takes the bulk
// path (wire.BulkPath: a []byte, a numeric slice or a Bulk) and a remote
// rank runs on the root's host and the root's own slots are computing
// (rootPlacer.slotsBusy), the root allocates the memory of the
// results it expects with the TASK (grants: one buffer per item, of the
// size that rank's results had so far) and the remote rank writes each
// result's data straight into its grant (process_vm_writev) before it
// sends the RESULT, whose segment table then marks the segment placed
// instead of sending it. So the copy and its faults run on the sending
// rank's core, and the root only takes the buffer. Everything else stays
// as it was: a segment without a fitting grant (a different size, more
// segments than grants, a rank that cannot write into the root) travels
// as a message of its own, and the root drops the grants a RESULT did not
// use.
//
// Safety: a grant stays referenced by the root (rootPlacer.live) until
// the RESULT of its TASK has arrived, and the remote rank writes only
// before it sends that RESULT; Go's heap does not move objects. Before
// its first write in a call a rank checks that the root is the process it
// names: the same host key (boot id and PID and network namespaces), and
// a read of the root's nonce at its address gives the nonce the TASK
// carries. A rank on another host (or namespace host) never writes.
//
// HATAORI_SENDER_COPY=0 in the root's environment turns placement off
// (every segment travels through MPI).

// taskGrants, in a TASK's Status byte, says that its payload ends with a
// grant table (grantTail).
const taskGrants uint8 = 1 << 2

// grantHead is the fixed end of a TASK's grant table: six raw
// little-endian uint64s (the grants' size, the root's pid, host key,
// nonce address, nonce, and the grant count G), preceded by G addresses.
const grantHead = 6 * 8

// placeBudget bounds the bytes a TASK grants (at least one grant).
const placeBudget = 32 << 20

// resultUnplaceable, in a RESULT's Status byte, says that the sending
// rank got grants but cannot write into the root (another host, or no
// permission): the root grants it no more.
const resultUnplaceable uint8 = 1 << 5

// placedBit, in a segment table's length field, marks a segment the
// sending rank wrote into a grant; bits 40 to 62 hold the grant's
// position in its TASK (placedShift), the low 40 bits the length.
const (
	placedBit   = uint64(1) << 63
	placedShift = 40
	placedLen   = uint64(1)<<placedShift - 1
)

// grantTail is a TASK's grant table as the remote rank reads it.
type grantTail struct {
	size      uint64 // every grant's size in bytes
	pid       int
	hostKey   uint64
	nonceAddr uint64
	nonce     uint64
	addrs     []uint64
}

// appendGrants appends t to frame (a sealed TASK) and reseals its header.
func appendGrants(frame []byte, t grantTail) []byte {
	for _, a := range t.addrs {
		frame = binary.LittleEndian.AppendUint64(frame, a)
	}
	return appendTail(frame, taskGrants, t.size, uint64(t.pid), t.hostKey, t.nonceAddr, t.nonce, uint64(len(t.addrs)))
}

// splitGrants removes the grant table from the end of a TASK's payload.
func splitGrants(payload []byte) (grantTail, []byte, error) {
	var t grantTail
	if len(payload) < grantHead {
		return t, nil, &wire.Error{Kind: wire.ErrTruncated, Detail: fmt.Sprintf("TASK of %d bytes has no grant table", len(payload))}
	}
	p := payload[len(payload)-grantHead:]
	v := func(i int) uint64 { return binary.LittleEndian.Uint64(p[8*i:]) }
	g := v(5)
	if g == 0 || g > uint64(len(payload)-grantHead)/8 {
		return t, nil, &wire.Error{Kind: wire.ErrDecode, Detail: fmt.Sprintf("TASK grants %d buffers in %d bytes", g, len(payload))}
	}
	t = grantTail{size: v(0), pid: int(v(1)), hostKey: v(2), nonceAddr: v(3), nonce: v(4), addrs: make([]uint64, g)}
	base := len(payload) - grantHead - 8*int(g)
	for i := range t.addrs {
		t.addrs[i] = binary.LittleEndian.Uint64(payload[base+8*i:])
	}
	return t, payload[:base], nil
}

// rootPlacer is the root's side: the grants of the TASKs in flight and
// what it has learnt of each rank's results. Coordinator only.
type rootPlacer struct {
	on    bool
	id    grantTail // the root's part of every grant table (pid, host key, nonce and its address)
	nonce []byte    // 8 random bytes the remote ranks read back
	size  []int     // per rank: the grant size (its last RESULT's largest segment; 0: none yet)
	off   []bool    // per rank: it did not place into its grants, grant no more
	live  map[grantKey][][]byte
	// Whether the root's slots compute (slotsBusy): placement moves the
	// copy to the sender's core, which pays only when the root's own
	// items keep its cores busy; with the root's slots idle (or asleep)
	// the coordinator's receive costs nothing the call waits for, and
	// the sender's core is better spent computing.
	inline         bool  // the coordinator runs the root's only slot itself
	at, proc, thrd int64 // the last sample: monotonic, process and coordinator thread CPU ns
	busy           bool
}

type grantKey struct {
	rank int
	id   uint64
}

// newRootPlacer says whether a call of result type U may place (its
// results take the bulk path, fresh memory receives them, the host has a
// key, placement is not turned off).
func newRootPlacer[U any](ranks int, fresh, inline bool) *rootPlacer {
	p := &rootPlacer{inline: inline}
	if ranks < 2 || !fresh || !wire.BulkPath[U]() || os.Getenv("HATAORI_SENDER_COPY") == "0" {
		return p
	}
	key := hostKey()
	if key == 0 {
		return p
	}
	p.on = true
	p.nonce = make([]byte, 8)
	binary.LittleEndian.PutUint64(p.nonce, randomNonce())
	p.id = grantTail{pid: os.Getpid(), hostKey: key, nonceAddr: addrOf(p.nonce), nonce: binary.LittleEndian.Uint64(p.nonce)}
	p.size, p.off = make([]int, ranks), make([]bool, ranks)
	p.live = make(map[grantKey][][]byte)
	p.slotsBusy()
	return p
}

// placeForceBusy makes slotsBusy report true (tests that need grants
// whatever the schedule).
var placeForceBusy bool

// placeWindow is the least time between two samples of slotsBusy.
const placeWindow = 2 * time.Millisecond

// slotsBusy reports whether the root's slots kept at least half a CPU
// busy over the last window of at least placeWindow: the process's CPU
// time less the coordinator thread's (the caller's, locked to its thread
// for the call). With an inline slot the coordinator computes the items
// itself, so it always counts as busy. False before the first window.
// Costs three clock reads per window.
func (p *rootPlacer) slotsBusy() bool {
	if p.inline || placeForceBusy {
		return true
	}
	now, proc, thrd, ok := cpuClocks()
	if !ok {
		return false
	}
	if p.at != 0 && now-p.at < int64(placeWindow) {
		return p.busy
	}
	if p.at != 0 {
		p.busy = 2*((proc-p.proc)-(thrd-p.thrd)) >= now-p.at
	}
	p.at, p.proc, p.thrd = now, proc, thrd
	return p.busy
}

// grant allocates the grants of TASK id of count items to rank to, if it
// should get any.
func (p *rootPlacer) grant(to int, id int64, count int) (grantTail, bool) {
	if !p.on || p.off[to] || p.size[to] == 0 || !p.slotsBusy() {
		return grantTail{}, false
	}
	s := p.size[to]
	g := min(count, max(1, placeBudget/s))
	bufs := make([][]byte, g)
	t := p.id
	t.size, t.addrs = uint64(s), make([]uint64, g)
	for i := range bufs {
		bufs[i] = make([]byte, s)
		t.addrs[i] = addrOf(bufs[i])
	}
	p.live[grantKey{to, uint64(id)}] = bufs
	return t, true
}

// take removes and returns the grants of rank from's TASK id (nil: none).
func (p *rootPlacer) take(from int, id uint64) [][]byte {
	if !p.on {
		return nil
	}
	k := grantKey{from, id}
	g := p.live[k]
	delete(p.live, k)
	return g
}

// learn notes a RESULT of rank from whose segments the root received as
// b: the largest becomes the rank's grant size, and a rank that cannot
// write into the root (unplaceable) gets no more grants in this call.
func (p *rootPlacer) learn(from int, b resultBodies, unplaceable bool) {
	if !p.on || from < 0 || from >= len(p.size) {
		return
	}
	debugPlaced(b.placed)
	if unplaceable {
		p.off[from] = true
	}
	largest := 0
	for _, sg := range b.segs {
		largest = max(largest, len(sg.Data))
	}
	if largest >= resultSegMin {
		p.size[from] = largest
	}
}

// remotePlacer is a remote rank's side: whether the root named by the
// call's grants is writable (checked once, by the first slot that needs
// it).
type remotePlacer struct {
	mu      sync.Mutex
	checked bool
	ok      bool
}

// usable checks t's root once per call: same host key, and its nonce
// reads back.
func (p *remotePlacer) usable(t grantTail) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.checked {
		p.checked = true
		var b [8]byte
		p.ok = t.hostKey != 0 && t.hostKey == hostKey() && t.pid != os.Getpid() &&
			readFrom(t.pid, uintptr(t.nonceAddr), b[:]) == nil && binary.LittleEndian.Uint64(b[:]) == t.nonce
	}
	return p.ok
}

// disable turns placement off for the rest of the call (a write failed).
func (p *remotePlacer) disable() {
	p.mu.Lock()
	p.ok = false
	p.mu.Unlock()
}

// place writes each segment of a RESULT frame (bodies, in table order:
// none when the frame is not segmented) that fits the next unused grant into that grant, marks it placed
// in frame's table, and returns the bodies still to send. When the root
// is not writable it marks the frame resultUnplaceable instead. A segment fits
// a grant of at most twice its size (so that a result keeps no more than
// double its memory).
func (p *remotePlacer) place(t grantTail, frame []byte, bodies [][]byte) [][]byte {
	if !p.usable(t) {
		frame[2] |= resultUnplaceable // the header's Status byte
		return bodies
	}
	if len(bodies) == 0 {
		return bodies
	}
	table := frame[wire.HeaderSize+8:]
	rest := bodies[:0:0]
	next := 0
	for i, b := range bodies {
		n := uint64(len(b))
		if next >= len(t.addrs) || n > t.size || 2*n < t.size || n > placedLen {
			rest = append(rest, b)
			continue
		}
		if err := writeTo(t.pid, uintptr(t.addrs[next]), b); err != nil {
			p.disable()
			rest = append(rest, bodies[i:]...)
			break
		}
		binary.LittleEndian.PutUint64(table[16*i+8:], n|placedBit|uint64(next)<<placedShift)
		next++
	}
	return rest
}

// addrOf is the address of b's first byte (b not empty) as a grant
// carries it.
func addrOf(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
