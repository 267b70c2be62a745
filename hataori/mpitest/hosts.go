package mpitest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Environment variables of the multi-host mode. HostsEnv turns it on; the
// others are optional launcher extras. scripts/multihost.sh sets them for
// its network-namespace hosts.
const (
	// HostsEnv lists the hosts every job (except Config.Mismatch jobs)
	// runs across, as "ADDR:SLOTS,ADDR:SLOTS,..." (":SLOTS" may be left
	// out: one slot). Open MPI gets --host LIST, MPICH -hosts LIST. The
	// launcher runs where the parent test runs; the test binary must be
	// at the same path on every host (a shared file system).
	HostsEnv = "HATAORI_MPITEST_HOSTS"
	// RshAgentEnv names the command that starts the launcher's daemons on
	// the other hosts, called as "AGENT [options] HOST command..." like
	// ssh: Open MPI --mca plm_rsh_agent AGENT, MPICH -launcher ssh
	// -launcher-exec AGENT. Unset: the launchers' default (ssh).
	RshAgentEnv = "HATAORI_MPITEST_RSH_AGENT"
	// TCPEnv keeps Open MPI jobs on TCP (--mca btl tcp,self, no shared
	// memory) and on these networks or interfaces (btl_tcp_if_include and
	// oob_tcp_if_include), e.g. "192.0.2.64/28" or "eth1".
	TCPEnv = "HATAORI_MPITEST_TCP"
	// IfaceEnv is the network interface MPICH jobs use (-iface IFACE).
	IfaceEnv = "HATAORI_MPITEST_IFACE"
	// ForwardEnv lists more variables, by name and comma-separated, that
	// Open MPI must forward to the ranks on other hosts (-x NAME). The
	// harness's own variables, MPI_RT_LIB, Config.Env and every HATAORI_*
	// variable are forwarded without it. (MPICH's Hydra forwards the whole
	// environment.)
	ForwardEnv = "HATAORI_MPITEST_FORWARD"
	// OpenMPIArgsEnv and MPICHArgsEnv hold extra launcher arguments,
	// split at white space, added before the program (for example
	// "--map-by node"). They apply on one host too.
	OpenMPIArgsEnv = "HATAORI_MPITEST_OPENMPI_ARGS"
	MPICHArgsEnv   = "HATAORI_MPITEST_MPICH_ARGS"
)

// host is one entry of HostsEnv.
type host struct {
	addr  string
	slots int
}

// site is the launch setup read from the environment: the multi-host
// settings (when hosts is non-empty) and the extra launcher arguments.
type site struct {
	hosts   []host
	agent   string
	tcp     string
	iface   string
	forward []string
	// extra holds the extra arguments by launcher name.
	extra map[string][]string
	// environ is the environment the site was read from.
	environ []string
}

// siteFrom reads the launch setup from environ (os.Environ() in Run).
// Without any of the variables above the site means single-host jobs with
// the launchers' default arguments.
func siteFrom(environ []string) (site, error) {
	getenv := func(name string) string {
		v := ""
		for _, kv := range environ {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val // the last one wins, as in exec
			}
		}
		return v
	}
	s := site{
		environ: environ,
		agent:   strings.TrimSpace(getenv(RshAgentEnv)),
		tcp:     strings.TrimSpace(getenv(TCPEnv)),
		iface:   strings.TrimSpace(getenv(IfaceEnv)),
	}
	if v := strings.TrimSpace(getenv(HostsEnv)); v != "" {
		hs, err := parseHosts(v)
		if err != nil {
			return site{}, fmt.Errorf("%s=%q: %v", HostsEnv, v, err)
		}
		s.hosts = hs
	}
	for _, name := range strings.Split(getenv(ForwardEnv), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if strings.ContainsAny(name, "= \t") {
			return site{}, fmt.Errorf("%s: %q is not a variable name", ForwardEnv, name)
		}
		s.forward = append(s.forward, name)
	}
	for l, v := range map[string]string{openMPI.name: OpenMPIArgsEnv, mpich.name: MPICHArgsEnv} {
		if f := strings.Fields(getenv(v)); len(f) > 0 {
			if s.extra == nil {
				s.extra = map[string][]string{}
			}
			s.extra[l] = f
		}
	}
	return s, nil
}

// parseHosts parses "ADDR[:SLOTS],...".
func parseHosts(v string) ([]host, error) {
	var hs []host
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, fmt.Errorf("empty host entry")
		}
		h := host{addr: e, slots: 1}
		if i := strings.LastIndexByte(e, ':'); i >= 0 {
			n, err := strconv.Atoi(e[i+1:])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("host %q: slots must be a positive integer", e)
			}
			h = host{addr: e[:i], slots: n}
		}
		if h.addr == "" || strings.ContainsAny(h.addr, " \t:") {
			return nil, fmt.Errorf("host %q: bad address", e)
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// multiHost reports whether jobs run across hosts.
func (s site) multiHost() bool { return len(s.hosts) > 0 }

// hostList is the host list in the launchers' "ADDR:SLOTS,..." syntax.
func (s site) hostList() string {
	parts := make([]string, len(s.hosts))
	for i, h := range s.hosts {
		parts[i] = h.addr + ":" + strconv.Itoa(h.slots)
	}
	return strings.Join(parts, ",")
}

// args returns the launcher arguments, before the program, of a job of n
// ranks under pairing p whose ranks get the variables env (KEY=value,
// what the harness adds to the launcher's environment). Without hosts and
// extras they are the launcher's own arguments, unchanged. A Mismatch
// pairing always runs on one host.
func (s site) args(p pairing, n int, env []string) []string {
	args := p.launcher.args(n)
	if s.multiHost() && p.launcher.name == p.lib.name {
		switch p.launcher.name {
		case openMPI.name:
			args = append(args, "--host", s.hostList())
			if s.agent != "" {
				args = append(args, "--mca", "plm_rsh_agent", s.agent)
			}
			if s.tcp != "" {
				args = append(args, "--mca", "btl", "tcp,self",
					"--mca", "btl_tcp_if_include", s.tcp,
					"--mca", "oob_tcp_if_include", s.tcp)
			}
			for _, name := range s.forwarded(env) {
				args = append(args, "-x", name)
			}
		case mpich.name:
			args = append(args, "-hosts", s.hostList())
			if s.agent != "" {
				args = append(args, "-launcher", "ssh", "-launcher-exec", s.agent)
			}
			if s.iface != "" {
				args = append(args, "-iface", s.iface)
			}
		}
	}
	return append(args, s.extra[p.launcher.name]...)
}

// forwarded lists, in a fixed order, the variables Open MPI must forward
// to remote ranks: those of env, those of ForwardEnv that are set, and
// every HATAORI_* variable of the site's environment. OMPI_* variables are
// the launcher's own settings and are left out.
func (s site) forwarded(env []string) []string {
	set := map[string]bool{}
	var own []string
	for _, kv := range append(slices.Clip(s.environ), env...) {
		name, _, _ := strings.Cut(kv, "=")
		set[name] = true
		if strings.HasPrefix(name, "HATAORI_") {
			own = append(own, name)
		}
	}
	var names []string
	add := func(name string) {
		if name != "" && set[name] && !strings.HasPrefix(name, "OMPI_") && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		add(name)
	}
	for _, name := range s.forward {
		add(name)
	}
	slices.Sort(own)
	for _, name := range own {
		add(name)
	}
	return names
}
