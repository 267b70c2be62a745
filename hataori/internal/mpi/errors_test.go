package mpi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

func TestErrorMessage(t *testing.T) {
	inner := errors.New("inner")
	var err error = &mpi.Error{Func: "MPI_Send", Code: 3, Msg: "invalid rank", Err: inner}
	if got, want := err.Error(), "mpi: MPI_Send failed (code 3): invalid rank"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, inner) {
		t.Error("errors.Is does not reach the wrapped error")
	}
	var e *mpi.Error
	if !errors.As(err, &e) || e.Code != 3 {
		t.Errorf("errors.As = %v", e)
	}
	if got := (&mpi.Error{Func: "MPI_Recv", Code: 5}).Error(); got != "mpi: MPI_Recv failed (code 5)" {
		t.Errorf("Error() without Msg = %q", got)
	}
}

func TestThreadLevelString(t *testing.T) {
	cases := map[mpi.ThreadLevel]string{
		mpi.ThreadSingle: "MPI_THREAD_SINGLE", mpi.ThreadFunneled: "MPI_THREAD_FUNNELED",
		mpi.ThreadSerialized: "MPI_THREAD_SERIALIZED", mpi.ThreadMultiple: "MPI_THREAD_MULTIPLE",
		7: "ThreadLevel(7)",
	}
	for l, want := range cases {
		if got := l.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(l), got, want)
		}
	}
}

// TestInitThreadBadLevel needs no MPI: the level is checked first.
func TestInitThreadBadLevel(t *testing.T) {
	_, err := mpi.InitThread(7)
	if mpi.Backend() == "none" {
		if !errors.Is(err, mpi.ErrNoBackend) {
			t.Fatalf("InitThread(7) = %v, want ErrNoBackend", err)
		}
		return
	}
	var e *mpi.Error
	if !errors.As(err, &e) || e.Code != mpi.CodeNotMPI || !strings.Contains(e.Msg, "out of range") {
		t.Fatalf("InitThread(7) = %v, want an out-of-range *mpi.Error", err)
	}
}
