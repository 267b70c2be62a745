//go:build linux

package coll

import (
	"encoding/binary"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Bell is a Kick in a page of memory that the processes of one host share
// (a memfd): one process waits on it (the root's coordinator, between its
// polls of MPI) and the others ring it right after they start a message to
// that process, so its sleeps end when a message is there instead of
// lasting a whole poll interval, and it can sleep long while nothing
// comes. The futex operations are the shared ones (no FUTEX_PRIVATE_FLAG).
// A ring costs one atomic add, plus one futex wake while the owner waits.
//
// The owner creates it once per process (NewBell) and tells the others its
// BellRef; another process maps it through /proc/<pid>/fd/<fd> (OpenBell),
// which the kernel allows where it allows reading the owner's /proc entries
// (same user, the owner dumpable), and checks the nonce the owner wrote
// into the page, so a reused descriptor number is never taken for the
// bell. The page stays mapped for the life of the process.
type Bell struct {
	k   *Kick
	ref BellRef
}

// BellRef names a Bell for the processes of its host.
type BellRef struct {
	PID   int    // the owner's process id
	FD    int    // the memfd's descriptor in the owner
	Host  uint64 // the owner's host key (0: unknown, never opened)
	Nonce uint64 // 8 random bytes the owner wrote at bellNonceAt
}

const (
	bellPage    = 4096
	bellNonceAt = 64 // the Kick takes the first 8 bytes
)

// NewBell creates a bell owned by this process; host is this process's
// host key and nonce 8 random bytes.
func NewBell(host, nonce uint64) (*Bell, error) {
	fd, err := unix.MemfdCreate("hataori-bell", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("hataori: bell: memfd_create: %w", err)
	}
	mem, err := mapBell(fd)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	binary.LittleEndian.PutUint64(mem[bellNonceAt:], nonce)
	return &Bell{k: (*Kick)(unsafe.Pointer(&mem[0])), ref: BellRef{PID: os.Getpid(), FD: fd, Host: host, Nonce: nonce}}, nil
}

// OpenBell maps the bell ref names, owned by another process of the host
// whose key is host.
func OpenBell(ref BellRef, host uint64) (*Bell, error) {
	if ref.Host == 0 || ref.Host != host || ref.PID == os.Getpid() {
		return nil, fmt.Errorf("hataori: bell of process %d: not another process of this host", ref.PID)
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/fd/%d", ref.PID, ref.FD), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("hataori: bell of process %d: %w", ref.PID, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Size != bellPage {
		return nil, fmt.Errorf("hataori: bell of process %d: descriptor %d is not a bell", ref.PID, ref.FD)
	}
	mem, err := mapBell(fd)
	if err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint64(mem[bellNonceAt:]) != ref.Nonce {
		_ = unix.Munmap(mem)
		return nil, fmt.Errorf("hataori: bell of process %d: descriptor %d is not a bell (nonce)", ref.PID, ref.FD)
	}
	return &Bell{k: (*Kick)(unsafe.Pointer(&mem[0])), ref: ref}, nil
}

// mapBell sizes the memfd (its size is already bellPage when it is not
// this process's) and maps its page shared.
func mapBell(fd int) ([]byte, error) {
	if err := unix.Ftruncate(fd, bellPage); err != nil {
		return nil, fmt.Errorf("hataori: bell: ftruncate: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, bellPage, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("hataori: bell: mmap: %w", err)
	}
	return mem, nil
}

// Ref is what another process needs to open the bell.
func (b *Bell) Ref() BellRef { return b.ref }

// Seq, Wait: as Kick's (the owner waits).
func (b *Bell) Seq() uint32 { return b.k.Seq() }

func (b *Bell) Wait(seen uint32, d time.Duration) bool {
	return b.k.waitOp(futexWait, seen, d)
}

// Ring advances the count and wakes the owner if it waits.
func (b *Bell) Ring() { b.k.wake(futexWake, 1) }
