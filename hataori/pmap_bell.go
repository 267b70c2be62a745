package hataori

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"

	"github.com/hataori/hataori-go/hataori/internal/coll"
	"github.com/hataori/hataori-go/hataori/internal/wire"
)

// The root's bell (docs/ARCHITECTURE.md, "Waiting on a shared core"): a
// coll.Bell the root's coordinator sleeps on between its polls of MPI, which
// every other rank of its host rings right after it starts a frame to the
// root. The root's TASKs to a rank carry the bell's reference (taskBell)
// until that rank's READYs say it rings it (readyBell); once every other
// rank does, the root sleeps until a frame is there or its own slots nudge
// it, at most loopBusyWait, instead of polling every 50–200 µs or at the
// RESULTs' predicted times. Ranks of other hosts never open it (their
// host key differs), and the root then polls as before.
// HATAORI_BELL=0 in the root's environment turns it off.

const (
	// taskBell, in a TASK's Status byte, says that its payload ends with
	// the root's bell (bellTail bytes, after any grant table).
	taskBell uint8 = 1 << 3
	// readyBell, in a READY's Status byte, says that its sender rings the
	// root's bell after every frame it sends the root in this call.
	readyBell uint8 = 1 << 6
	// bellTail is the size of a TASK's bell reference: pid, descriptor,
	// host key and nonce, raw little-endian uint64s.
	bellTail = 32
)

// processBell is this process's bell as the root of its calls, created at
// its first call as root on more than one rank (nil: none here).
var processBell = sync.OnceValue(func() *coll.Bell {
	key := hostKey()
	if key == 0 || os.Getenv("HATAORI_BELL") == "0" {
		return nil
	}
	b, err := coll.NewBell(key, randomNonce())
	if err != nil {
		return nil
	}
	return b
})

// appendBell appends ref to frame (a sealed TASK, its grants appended
// already) and reseals its header.
func appendBell(frame []byte, ref coll.BellRef) []byte {
	return appendTail(frame, taskBell, uint64(ref.PID), uint64(ref.FD), ref.Host, ref.Nonce)
}

// splitBell removes the bell reference from the end of a TASK's payload.
func splitBell(payload []byte) (coll.BellRef, []byte, error) {
	if len(payload) < bellTail {
		return coll.BellRef{}, nil, &wire.Error{Kind: wire.ErrTruncated, Detail: fmt.Sprintf("TASK of %d bytes has no bell", len(payload))}
	}
	p := payload[len(payload)-bellTail:]
	v := func(i int) uint64 { return binary.LittleEndian.Uint64(p[8*i:]) }
	return coll.BellRef{PID: int(v(0)), FD: int(v(1)), Host: v(2), Nonce: v(3)}, payload[:len(payload)-bellTail], nil
}

// maxBells bounds the roots' bells a process maps (each a page, kept for
// the life of the process; a process meets as many roots as its host has
// ranks that are roots of its calls).
const maxBells = 64

// openedBells are the other processes' bells this process has opened, by
// reference (nil: opening failed, not tried again).
var openedBells struct {
	sync.Mutex
	m map[coll.BellRef]*coll.Bell
}

// openBell returns the bell ref names, opened once per process (nil: it
// cannot be opened here: another host, /proc not readable, too many).
func openBell(ref coll.BellRef) *coll.Bell {
	openedBells.Lock()
	defer openedBells.Unlock()
	if b, ok := openedBells.m[ref]; ok {
		return b
	}
	if len(openedBells.m) >= maxBells {
		return nil
	}
	if openedBells.m == nil {
		openedBells.m = make(map[coll.BellRef]*coll.Bell)
	}
	b, err := coll.OpenBell(ref, hostKey())
	if err != nil {
		b = nil
	}
	openedBells.m[ref] = b
	return b
}

// rootBells is the root coordinator's view of the bell: which ranks ring
// it. Coordinator only.
type rootBells struct {
	bell   *coll.Bell // nil: no bell (another OS, HATAORI_BELL=0, world size one)
	rings  []bool     // per rank: its READYs said it rings the bell
	nRings int
}

func newRootBells(size int) rootBells {
	if size < 2 {
		return rootBells{}
	}
	return rootBells{bell: processBell(), rings: make([]bool, size)}
}

// ready notes a READY's readyBell flag and returns the status without it.
func (b *rootBells) ready(from int, status uint8) uint8 {
	if status&readyBell != 0 && b.bell != nil && !b.rings[from] {
		b.rings[from] = true
		b.nRings++
	}
	return status &^ readyBell
}

// tail appends the bell to a TASK for rank to while that rank does not
// ring it yet.
func (b *rootBells) tail(to int, frame []byte) []byte {
	if b.bell == nil || b.rings[to] {
		return frame
	}
	return appendBell(frame, b.bell.Ref())
}

// all reports whether every other rank rings the bell.
func (b *rootBells) all() bool { return b.bell != nil && b.nRings == len(b.rings)-1 }

// seq is the bell's count, read before a round's polls (0: no bell).
func (b *rootBells) seq() uint32 {
	if b.bell == nil {
		return 0
	}
	return b.bell.Seq()
}
