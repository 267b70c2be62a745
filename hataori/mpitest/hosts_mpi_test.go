package mpitest

import (
	"net"
	"os"
	"testing"
	"time"
)

// TestHarnessSpreadsOverHosts checks, in multi-host mode (HostsEnv set,
// e.g. by scripts/multihost.sh), that a 4-rank job really runs on the
// hosts listed: every rank logs the IPv4 addresses of the host it runs on,
// and every listed host given an IP address that receives a rank (slots
// are filled in order) must appear. On one host it skips.
func TestHarnessSpreadsOverHosts(t *testing.T) {
	const ranks = 4
	if !Child() {
		s, err := siteFrom(os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		if !s.multiHost() {
			t.Skipf("single host: set %s to run jobs across hosts", HostsEnv)
		}
		var want []string
		first := 0
		for _, h := range s.hosts {
			if first < ranks && net.ParseIP(h.addr) != nil {
				want = append(want, "on host "+h.addr+" ")
			}
			first += h.slots
		}
		Run(t, Config{Ranks: ranks, Timeout: 60 * time.Second, Want: want})
		return
	}
	rank, size := Init(t)
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
			t.Logf("rank %d of %d on host %s (%s)", rank, size, ip.IP, a)
		}
	}
}
