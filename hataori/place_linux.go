package hataori

import (
	"crypto/rand"
	"encoding/binary"
	"hash/fnv"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// hostKey identifies this process's host for sender-side placement
// (pmap_place.go): a hash of the kernel's boot id and this process's PID
// and network namespaces, so that processes in different namespaces (the
// hosts of scripts/multihost.sh) or on different machines differ. 0 when
// any of them cannot be read (no placement).
var hostKey = sync.OnceValue(func() uint64 {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(strings.TrimSpace(string(boot))))
	for _, ns := range []string{"/proc/self/ns/pid", "/proc/self/ns/net"} {
		l, err := os.Readlink(ns)
		if err != nil {
			return 0
		}
		h.Write([]byte{0})
		h.Write([]byte(l))
	}
	return max(h.Sum64(), 1)
})

// randomNonce returns 8 random bytes as a uint64.
func randomNonce() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails on Linux
	return binary.LittleEndian.Uint64(b[:])
}

// writeTo copies data to addr in process pid's memory
// (process_vm_writev), all of it or an error.
func writeTo(pid int, addr uintptr, data []byte) error {
	return vmCopy(unix.ProcessVMWritev, pid, addr, data)
}

// readFrom copies len(buf) bytes at addr in process pid's memory into buf
// (process_vm_readv), all of them or an error.
func readFrom(pid int, addr uintptr, buf []byte) error {
	return vmCopy(unix.ProcessVMReadv, pid, addr, buf)
}

// vmCopy moves len(local) bytes between local and addr in process pid
// with op (process_vm_writev or readv), calling it again after a short
// transfer.
func vmCopy(op func(int, []unix.Iovec, []unix.RemoteIovec, uint) (int, error), pid int, addr uintptr, local []byte) error {
	for len(local) > 0 {
		iov := []unix.Iovec{{Base: &local[0]}}
		iov[0].SetLen(len(local))
		n, err := op(pid, iov, []unix.RemoteIovec{{Base: addr, Len: len(local)}}, 0)
		if err != nil {
			return err
		}
		if n <= 0 {
			return unix.EFAULT
		}
		local, addr = local[n:], addr+uintptr(n)
	}
	return nil
}

// cpuClocks reads the monotonic clock and the CPU time of this process
// and of the calling thread, in ns.
func cpuClocks() (now, proc, thread int64, ok bool) {
	var a, b, c unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &a) != nil || unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &b) != nil ||
		unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &c) != nil {
		return 0, 0, 0, false
	}
	return a.Nano(), b.Nano(), c.Nano(), true
}
