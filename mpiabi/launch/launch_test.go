package launch

import "testing"

func TestMismatch(t *testing.T) {
	for _, v := range vars {
		t.Setenv(v.Var, "")
	}
	if a, bad := Mismatch(1); bad {
		t.Fatalf("no usable launcher variable: got mismatch %+v", a)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "2")
	if _, bad := Mismatch(2); bad {
		t.Fatal("size 2 announced and found: reported a mismatch")
	}
	a, bad := Mismatch(1)
	if !bad || a.Var != "OMPI_COMM_WORLD_SIZE" || a.Size != 2 || a.Family != OpenMPI {
		t.Fatalf("Mismatch(1) = %+v, %v; want OMPI_COMM_WORLD_SIZE=2 from Open MPI", a, bad)
	}
	t.Setenv("OMPI_COMM_WORLD_SIZE", "1")
	t.Setenv("PMI_SIZE", " 4 ")
	a, bad = Mismatch(1)
	if !bad || a.Var != "PMI_SIZE" || a.Size != 4 || a.Family != MPICH {
		t.Fatalf("Mismatch(1) = %+v, %v; want PMI_SIZE=4 from MPICH", a, bad)
	}
	t.Setenv("PMI_SIZE", "not a number")
	if a, bad := Mismatch(1); bad {
		t.Fatalf("unparsable size: got mismatch %+v", a)
	}
}

func TestFamilyOf(t *testing.T) {
	for v, want := range map[string]Family{
		"Open MPI v4.1.4, package: Debian OpenMPI": OpenMPI,
		"MPICH Version:      4.0.2":                MPICH,
		"Intel(R) MPI Library":                     Unknown,
	} {
		if got := FamilyOf(v); got != want {
			t.Errorf("FamilyOf(%q) = %v, want %v", v, got, want)
		}
	}
}
