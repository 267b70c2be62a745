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

// Version strings as the libraries print them. Hataori's wrapper
// (wrapper/mpiabi_wrapper.c) passes the wrapped MPI's string through
// unchanged, so its strings are the native ones: these two were printed
// by LibraryVersion through build/wrappers/libmpiabi-openmpi.so and
// libmpiabi-mpich.so (Debian's Open MPI 4.1.4 and MPICH 4.0.2).
const (
	nativeOpenMPI = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
	nativeMPICH   = "MPICH Version:\t4.0.2\n" +
		"MPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n" +
		"MPICH ABI:\t14:2:2\n" +
		"MPICH Device:\tch4:ucx\n" +
		"MPICH configure:\t--build=x86_64-linux-gnu --prefix=/usr --includedir=${prefix}/include --mandir=${prefix}/share/man --infodir=${prefix}/share/info --sysconfdir=/etc --localstatedir=/var --disable-option-checking --disable-silent-rules --libdir=${prefix}/lib/x86_64-linux-gnu --runstatedir=/run --disable-maintainer-mode --disable-dependency-tracking --with-libfabric=/usr --with-slurm=/usr --with-ucx=/usr --with-device=ch4:ucx --with-pm=hydra --with-hwloc-prefix=/usr --with-wrapper-dl-type=none --enable-shared --without-yaksa --prefix=/usr --enable-fortran=all --disable-rpath --disable-wrapper-rpath --sysconfdir=/etc/mpich --libdir=/usr/lib/x86_64-linux-gnu --includedir=/usr/include/x86_64-linux-gnu/mpich --docdir=/usr/share/doc/mpich CPPFLAGS= CFLAGS= CXXFLAGS= FFLAGS=-O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong -fallow-invalid-boz -fallow-argument-mismatch FCFLAGS=-O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong -fallow-invalid-boz -fallow-argument-mismatch BASH_SHELL=/bin/bash\n" +
		"MPICH CC:\tgcc  -g -O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong -Wformat -Werror=format-security  -O2\n" +
		"MPICH CXX:\tg++  -g -O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong -Wformat -Werror=format-security -O2\n" +
		"MPICH F77:\tgfortran -O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong  -fallow-invalid-boz -fallow-argument-mismatch -g -O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong -cpp  -fallow-invalid-boz -fallow-argument-mismatch -O2\n" +
		"MPICH FC:\tgfortran -O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong  -fallow-invalid-boz -fallow-argument-mismatch -g -O2 -ffile-prefix-map=/build/mpich-1NaQGN/mpich-4.0.2=. -fstack-protector-strong -cpp  -fallow-invalid-boz -fallow-argument-mismatch -O2\n"
	// MPIwrapper 2.11.0 writes a line of its own first.
	mpiwrapperHead = "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:\n"
)

func TestParseVersion(t *testing.T) {
	const ompiLine = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
	const mpichLine = "MPICH Version:\t4.0.2"
	const wrapperLine = "MPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:"
	for _, c := range []struct {
		name, version string
		want          Version
	}{
		{"Open MPI (native, and through Hataori's wrapper)", nativeOpenMPI, Version{OpenMPI, ompiLine, ""}},
		{"MPICH (native, and through Hataori's wrapper)", nativeMPICH, Version{MPICH, mpichLine, ""}},
		{"MPIwrapper over Open MPI", mpiwrapperHead + nativeOpenMPI, Version{OpenMPI, ompiLine, wrapperLine}},
		{"MPIwrapper over MPICH", mpiwrapperHead + nativeMPICH, Version{MPICH, mpichLine, wrapperLine}},
		{"Open MPI 5", "Open MPI v5.0.3, package: Open MPI builder Distribution, ident: 5.0.3, repo rev: v5.0.3, Apr 08, 2024",
			Version{OpenMPI, "Open MPI v5.0.3, package: Open MPI builder Distribution, ident: 5.0.3, repo rev: v5.0.3, Apr 08, 2024", ""}},
		{"CRLF and a blank line", "\r\nMPIwrapper 2.11.0, using MPIABI 2.10.0, wrapping:\r\nOpen MPI v4.1.4\r\n", Version{OpenMPI, "Open MPI v4.1.4", wrapperLine}},
		{"two wrappers", "Outer 1.0, wrapping:\n" + mpiwrapperHead + "MPICH Version: 4.1", Version{MPICH, "MPICH Version: 4.1", "Outer 1.0, wrapping:\n" + wrapperLine}},
		// Only the MPI's own line counts: a later line naming the other
		// family does not mislead it.
		{"MPICH whose configure line names Open MPI", "MPICH Version: 4.0.2\nMPICH configure: --with-pmix=/opt/Open MPI", Version{MPICH, "MPICH Version: 4.0.2", ""}},
		{"Intel MPI", "Intel(R) MPI Library 2021.6 for Linux* OS\n", Version{Unknown, "Intel(R) MPI Library 2021.6 for Linux* OS", ""}},
		{"wrapper only", wrapperLine, Version{Unknown, "", wrapperLine}},
		{"empty", "", Version{}},
	} {
		if got := ParseVersion(c.version); got != c.want {
			t.Errorf("%s: ParseVersion(%q) = %+v, want %+v", c.name, c.version, got, c.want)
		}
		if got := FamilyOf(c.version); got != c.want.Family {
			t.Errorf("%s: FamilyOf = %v, want %v", c.name, got, c.want.Family)
		}
	}
}
