//go:build !mpirt && !mpicgo

package mpi

import "os"

// Backend names the backend compiled in: "none".
func Backend() string { return "none" }

// LinkedMPI names the MPI the binary is linked against ("openmpi" or
// "mpich") under mpicgo, and "" otherwise.
func LinkedMPI() string { return "" }

// Load returns ErrNoBackend.
func Load() error { return ErrNoBackend }

// InitThread returns ErrNoBackend.
func InitThread(ThreadLevel) (ThreadLevel, error) { return ThreadSingle, ErrNoBackend }

// Initialized returns ErrNoBackend.
func Initialized() (bool, error) { return false, ErrNoBackend }

// Finalized returns ErrNoBackend.
func Finalized() (bool, error) { return false, ErrNoBackend }

// Finalize returns ErrNoBackend.
func Finalize() error { return ErrNoBackend }

// QueryThread returns ErrNoBackend.
func QueryThread() (ThreadLevel, error) { return ThreadSingle, ErrNoBackend }

// IsThreadMain returns ErrNoBackend.
func IsThreadMain() (bool, error) { return false, ErrNoBackend }

// World returns 0.
func World() Handle { return 0 }

// Dup returns ErrNoBackend.
func Dup(Handle) (Handle, error) { return 0, ErrNoBackend }

// SetErrorsReturn returns ErrNoBackend.
func SetErrorsReturn(Handle) error { return ErrNoBackend }

// Free returns ErrNoBackend.
func Free(*Handle) error { return ErrNoBackend }

// Rank returns ErrNoBackend.
func Rank(Handle) (int, error) { return 0, ErrNoBackend }

// Size returns ErrNoBackend.
func Size(Handle) (int, error) { return 0, ErrNoBackend }

// Send returns ErrNoBackend.
func Send(Handle, []byte, int, int) error { return ErrNoBackend }

// Recv returns ErrNoBackend.
func Recv(Handle, []byte, int, int) (Status, error) { return Status{}, ErrNoBackend }

// Probe returns ErrNoBackend.
func Probe(Handle, int, int) (Status, error) { return Status{}, ErrNoBackend }

// Iprobe returns ErrNoBackend.
func Iprobe(Handle, int, int) (bool, Status, error) { return false, Status{}, ErrNoBackend }

// AnySource returns -1 (no MPI: the value is never used).
func AnySource() int { return -1 }

// AnyTag returns -1 (no MPI: the value is never used).
func AnyTag() int { return -1 }

// AllreduceMinInt64s returns ErrNoBackend.
func AllreduceMinInt64s(Handle, []int64, []int64) error { return ErrNoBackend }

// Bcast returns ErrNoBackend.
func Bcast(Handle, []byte, int) error { return ErrNoBackend }

// Barrier returns ErrNoBackend.
func Barrier(Handle) error { return ErrNoBackend }

// Abort exits the process with code: there is no MPI job to abort.
func Abort(_ Handle, code int) { os.Exit(code) }

// CheckLauncher returns ErrNoBackend.
func CheckLauncher(Handle) error { return ErrNoBackend }

// Polite reports false, false: there is no MPI backend.
func Polite() (reduce, dup bool) { return false, false }

// Ibarrier is not available (Polite reports false).
func Ibarrier(Handle) (Request, error) { return 0, ErrNoBackend }

// IallreduceMinInt64s is not available (Polite reports false).
func IallreduceMinInt64s(Handle, []int64, []int64) (Request, error) { return 0, ErrNoBackend }

// Idup is not available (Polite reports false).
func Idup(Handle, *Handle) (Request, error) { return 0, ErrNoBackend }

// Test is not available (Polite reports false).
func Test(*Request) (bool, error) { return false, ErrNoBackend }

// Isend reports ErrNoBackend.
func Isend(Handle, []byte, int, int) (Request, error) { return 0, ErrNoBackend }
