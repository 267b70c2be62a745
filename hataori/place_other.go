//go:build !linux

package hataori

import "errors"

// Sender-side placement (pmap_place.go) needs Linux's
// process_vm_writev: elsewhere every segment travels through MPI.

func hostKey() uint64 { return 0 }

func randomNonce() uint64 { return 0 }

var errNoPlacement = errors.New("hataori: no sender-side placement on this system")

func writeTo(int, uintptr, []byte) error { return errNoPlacement }

func readFrom(int, uintptr, []byte) error { return errNoPlacement }

func cpuClocks() (now, proc, thread int64, ok bool) { return 0, 0, 0, false }
