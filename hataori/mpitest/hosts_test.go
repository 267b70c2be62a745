package mpitest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// namespaceSite is the environment scripts/multihost.sh sets, plus noise.
var namespaceSite = []string{
	"PATH=/usr/bin",
	HostsEnv + "=192.0.2.65:2,192.0.2.66:2",
	RshAgentEnv + "=/tmp/x/rsh-agent",
	TCPEnv + "=192.0.2.64/28",
	IfaceEnv + "=hx0",
	"HATAORI_WRAPPER_OPENMPI=/lib/w.so",
	"HATAORI_REQUIRE_MPI=1",
	"OMPI_ALLOW_RUN_AS_ROOT=1",
	"GOMAXPROCS=2",
}

func mustSite(t *testing.T, environ []string) site {
	t.Helper()
	s, err := siteFrom(environ)
	if err != nil {
		t.Fatalf("siteFrom(%q): %v", environ, err)
	}
	return s
}

// TestSingleHostArgsUnchanged pins the single-host launcher lines: without
// the multi-host variables they are exactly what they always were.
func TestSingleHostArgsUnchanged(t *testing.T) {
	s := mustSite(t, []string{"PATH=/usr/bin", "HATAORI_WRAPPER_OPENMPI=/lib/w.so", RshAgentEnv + "=/a", TCPEnv + "=eth1"})
	if s.multiHost() {
		t.Fatal("multi-host without " + HostsEnv)
	}
	env := []string{ChildEnv + "=1", "MPI_RT_LIB=/lib/w.so"}
	cases := []struct {
		p    pairing
		want []string
	}{
		{pairing{openMPI, openMPI}, []string{"--oversubscribe", "--tag-output", "-n", "4"}},
		{pairing{mpich, mpich}, []string{"-l", "-n", "4"}},
		{pairing{mpich, openMPI}, []string{"-l", "-n", "4"}},
	}
	for _, c := range cases {
		if got := s.args(c.p, 4, env); !slices.Equal(got, c.want) {
			t.Errorf("%s: args = %q, want %q", c.p.name(4), got, c.want)
		}
	}
}

func TestMultiHostArgsOpenMPI(t *testing.T) {
	environ := append(slices.Clip(namespaceSite), ForwardEnv+"=GOMAXPROCS, UNSET_VAR ,GOMAXPROCS", OpenMPIArgsEnv+"= --map-by  node ")
	s := mustSite(t, environ)
	env := []string{ChildEnv + "=1", "OMPI_MCA_x=1", "MPI_RT_LIB=/lib/w.so", "HATAORI_LANES_COUNT=2"}
	got := s.args(pairing{openMPI, openMPI}, 4, env)
	want := []string{"--oversubscribe", "--tag-output", "-n", "4",
		"--host", "192.0.2.65:2,192.0.2.66:2",
		"--mca", "plm_rsh_agent", "/tmp/x/rsh-agent",
		"--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_include", "192.0.2.64/28", "--mca", "oob_tcp_if_include", "192.0.2.64/28",
		// env's variables except OMPI_*, then ForwardEnv's that are set,
		// then the HATAORI_* of the environment, sorted.
		"-x", ChildEnv, "-x", "MPI_RT_LIB", "-x", "HATAORI_LANES_COUNT", "-x", "GOMAXPROCS",
		"-x", ForwardEnv, "-x", HostsEnv, "-x", IfaceEnv, "-x", OpenMPIArgsEnv, "-x", RshAgentEnv, "-x", TCPEnv,
		"-x", "HATAORI_REQUIRE_MPI", "-x", "HATAORI_WRAPPER_OPENMPI",
		"--map-by", "node"}
	if !slices.Equal(got, want) {
		t.Errorf("args =\n %q\nwant\n %q", got, want)
	}
}

func TestMultiHostArgsMinimal(t *testing.T) {
	s := mustSite(t, []string{HostsEnv + "=node1,node2:8"})
	got := s.args(pairing{openMPI, openMPI}, 2, []string{ChildEnv + "=1"})
	want := []string{"--oversubscribe", "--tag-output", "-n", "2", "--host", "node1:1,node2:8", "-x", ChildEnv, "-x", HostsEnv}
	if !slices.Equal(got, want) {
		t.Errorf("Open MPI args = %q, want %q", got, want)
	}
	got = s.args(pairing{mpich, mpich}, 2, []string{ChildEnv + "=1"})
	want = []string{"-l", "-n", "2", "-hosts", "node1:1,node2:8"}
	if !slices.Equal(got, want) {
		t.Errorf("MPICH args = %q, want %q", got, want)
	}
}

func TestMultiHostArgsMPICH(t *testing.T) {
	s := mustSite(t, append(slices.Clip(namespaceSite), MPICHArgsEnv+"=-bind-to core:2"))
	got := s.args(pairing{mpich, mpich}, 4, []string{ChildEnv + "=1", "MPI_RT_LIB=/lib/m.so"})
	want := []string{"-l", "-n", "4", "-hosts", "192.0.2.65:2,192.0.2.66:2",
		"-launcher", "ssh", "-launcher-exec", "/tmp/x/rsh-agent", "-iface", "hx0", "-bind-to", "core:2"}
	if !slices.Equal(got, want) {
		t.Errorf("args = %q, want %q", got, want)
	}
}

// TestMismatchStaysOnOneHost: a deliberately mismatched pairing keeps the
// single-host line (plus the launcher's extras).
func TestMismatchStaysOnOneHost(t *testing.T) {
	s := mustSite(t, append(slices.Clip(namespaceSite), OpenMPIArgsEnv+"=--bind-to none"))
	if got, want := s.args(pairing{openMPI, mpich}, 2, nil), []string{"--oversubscribe", "--tag-output", "-n", "2", "--bind-to", "none"}; !slices.Equal(got, want) {
		t.Errorf("Open MPI launcher, MPICH library: args = %q, want %q", got, want)
	}
	if got, want := s.args(pairing{mpich, openMPI}, 2, nil), []string{"-l", "-n", "2"}; !slices.Equal(got, want) {
		t.Errorf("MPICH launcher, Open MPI library: args = %q, want %q", got, want)
	}
}

func TestSiteFromRejectsBadSettings(t *testing.T) {
	for _, v := range []string{
		HostsEnv + "=a,,b", HostsEnv + "=a:0", HostsEnv + "=a:x", HostsEnv + "=:2", HostsEnv + "=a b:2", HostsEnv + "=a:2,",
		ForwardEnv + "=A=1", ForwardEnv + "=A B",
	} {
		if _, err := siteFrom([]string{v}); err == nil {
			t.Errorf("siteFrom(%q) accepted it", v)
		} else if name, _, _ := strings.Cut(v, "="); !strings.Contains(err.Error(), name) {
			t.Errorf("siteFrom(%q): error %q does not name %s", v, err, name)
		}
	}
	s := mustSite(t, []string{HostsEnv + "=a", HostsEnv + "= b:3 , c "}) // the last setting wins
	if got := s.hostList(); got != "b:3,c:1" {
		t.Errorf("hostList = %q, want b:3,c:1", got)
	}
}

// TestStartJobMultiHostCommandLine runs a fake Open MPI launcher (a script
// printing its arguments) through startJob: the host arguments come before
// the program and its test flags.
func TestStartJobMultiHostCommandLine(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "mpirun")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := mustSite(t, namespaceSite)
	r := startJob(fake, pairing{openMPI, openMPI}, s, []string{"MPI_RT_LIB=/lib/w.so"}, "prog",
		Config{Ranks: 4, Test: "TestX", Timeout: 10 * time.Second, Env: []string{"K=v"}})
	if r.err != nil || r.timedOut || r.code != 0 {
		t.Fatalf("startJob = %+v", r)
	}
	line := strings.TrimSpace(r.output)
	prefix := "--oversubscribe --tag-output -n 4 --host 192.0.2.65:2,192.0.2.66:2 --mca plm_rsh_agent /tmp/x/rsh-agent " +
		"--mca btl tcp,self --mca btl_tcp_if_include 192.0.2.64/28 --mca oob_tcp_if_include 192.0.2.64/28 " +
		"-x " + ChildEnv + " -x MPI_RT_LIB -x K "
	if !strings.HasPrefix(line, prefix) {
		t.Errorf("command line %q does not start with %q", line, prefix)
	}
	if !strings.Contains(line, " prog -test.run=^TestX$ -test.count=1 -test.v=true -test.timeout=9s") {
		t.Errorf("command line %q lacks the program and its flags after the launcher arguments", line)
	}
	if !strings.Contains(r.desc, "on hosts 192.0.2.65:2,192.0.2.66:2") {
		t.Errorf("job description %q does not name the hosts", r.desc)
	}
}
