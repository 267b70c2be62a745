package hataori

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hataori/hataori-go/hataori/internal/mpi"
)

func TestMPIErrorIsAs(t *testing.T) {
	lib := errors.New("library error")
	err := fmt.Errorf("call: %w", mpiErr(&mpi.Error{Func: "MPI_Recv", Code: 15, Msg: "MPI_ERR_TRUNCATE: message truncated", Err: lib}))
	var me *MPIError
	if !errors.As(err, &me) || me.Func != "MPI_Recv" || me.Code != 15 || me.Message != "MPI_ERR_TRUNCATE: message truncated" {
		t.Fatalf("errors.As = %+v", me)
	}
	if !errors.Is(err, ErrMPI) || !errors.Is(err, lib) {
		t.Errorf("errors.Is(ErrMPI) %v, errors.Is(library error) %v", errors.Is(err, ErrMPI), errors.Is(err, lib))
	}
	if errors.Is(err, ErrNoMPI) || errors.Is(err, errors.New(ErrMPI.Error())) {
		t.Error("an *MPIError matches an unrelated error")
	}
	if want := "call: hataori: MPI_Recv failed (MPI error 15): MPI_ERR_TRUNCATE: message truncated"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if got := (&MPIError{Func: "MPI_Send", Code: 6}).Error(); got != "hataori: MPI_Send failed (MPI error 6)" {
		t.Errorf("message without text %q", got)
	}
	if !errors.Is(mpiErr(mpi.ErrNoBackend), ErrNoMPI) || mpiErr(nil) != nil {
		t.Error("mpiErr does not map ErrNoBackend to ErrNoMPI, or nil to nil")
	}
	other := errors.New("load error")
	if mpiErr(other) != other {
		t.Error("mpiErr changed an error that is not the transport's")
	}
}
