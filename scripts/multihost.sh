#!/usr/bin/env bash
# multihost.sh: Hataori's multi-rank tests across several hosts, on one
# machine. As root it builds two test hosts as network namespaces joined by a
# Linux bridge in the root namespace (one veth pair per host, lo up in each),
# writes an rsh agent that maps a host address to its namespace, and runs the
# multi-host suite through the real launcher inside the first host:
#
#   ip netns exec HOST_A <test binary>  ->  mpirun --host A:2,B:2 ...
#
# (the harness hataori/mpitest builds the launcher line from the
# HATAORI_MPITEST_* variables set here; see its package documentation).
# Every job has 4 ranks, 2 per host. Each test binary run is bounded by
# `timeout`, each job by the harness's own timeout, which kills the whole
# launcher session; the cleanup kills whatever is left in the namespaces.
#
# The suite, each under Open MPI and MPICH, for the run-time backend
# (-tags mpirt,hataoridebug, MPI_RT_LIB = our wrapper for that MPI) and the
# cgo backend (-tags mpicgo,hataoridebug, CC=mpicc or CC=mpicc.mpich): the
# Pmap acceptance tests (MPI-only and hybrid with a domain: TestPmapMPI,
# TestPmapErrors; every slot busy, the root answering while it computes,
# bounded prefetch: TestPmapSlotsAtOnce, TestPmapRootAnswersWhileComputing,
# TestPmapPrefetch), lanes' PmapLanes tests (4 ranks, 2 lanes; one batch per
# lane at once),
# Broadcast/Scatter/Gather (TestDataMPI), simultaneous-error
# convergence (TestCollectiveMPI), a panicking callback ending the job
# within 10 s, a rank SIGKILLed on the other host in the middle of a Pmap
# ending the job within 30 s, a ring, and a check that the ranks really run
# on both hosts. Open MPI runs on TCP only (btl tcp,self on 192.0.2.64/28).
# MPICH's Hydra starts one proxy per host through the same agent, but its
# UCX moves rank-to-rank data through shared memory (see the suite below).
# The test binaries are built first, before any host exists.
#
# Usage:
#   scripts/multihost.sh            run the suite
#   scripts/multihost.sh -- CMD...  build the hosts, then run CMD inside the
#                                   first host with the HATAORI_MPITEST_*
#                                   variables and MULTIHOST_* (addresses,
#                                   agent, namespaces) exported; for
#                                   experiments and benchmarks
#
# Needs root and iproute2 (`ip`); without either it fails (exit 1), it never
# skips. Every namespace, veth and the bridge it created are removed on exit,
# after a failure or an interrupt too. Names contain the PID, so that two
# runs do not collide.
#
# Addresses: 192.0.2.64/28 (.65, .66), a slice of the documentation range
# that exists only inside these namespaces. The namespaces get no default
# route, so nothing in them can reach any other address; in the root
# namespace the bridge has no address, answers no ARP (arp_ignore=8), drops
# what arrives on it (rp_filter=1) and has IPv6 off. (Note: on this project's
# VMs the root namespace's own eth0 is in 192.0.2.0/24, with 192.0.2.2 and a
# gateway at 192.0.2.1; the script refuses to run if its /28 overlaps any
# address or gateway of the root namespace.)
set -euo pipefail

die() {
	echo "multihost.sh: FAIL: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root: it creates network namespaces, a bridge and veth pairs (try: sudo $0)"
command -v ip >/dev/null 2>&1 || die "'ip' (iproute2) not found in PATH=$PATH: install iproute2"
for tool in sysctl timeout mktemp; do
	command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found in PATH=$PATH"
done
ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here (no network namespace support?)"

mode=suite
if [ "${1:-}" = -- ]; then
	mode=command
	shift
	[ $# -gt 0 ] || die "usage: $0 [-- COMMAND [ARGS...]]"
elif [ $# -gt 0 ]; then
	die "usage: $0 [-- COMMAND [ARGS...]]"
fi

cd "$(dirname "$0")/.."
root=$(pwd)
export PATH="/usr/local/go/bin:$PATH"

# --- names and addresses, unique to this run ---
id=$$
subnet=192.0.2.64/28
hosts=(a b)
declare -A addr=([a]=192.0.2.65 [b]=192.0.2.66)
iface=hx0 # the host's interface inside every namespace
bridge="hbr$id"
ns() { echo "hataori-$id-$1"; }
veth() { echo "hv$id$1"; } # root-namespace end of host $1's veth pair

# --- refuse to use addresses that exist outside our namespaces ---
in_subnet() { # in_subnet IP: is IP in 192.0.2.64/28?
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	[ "$a.$b.$c" = 192.0.2 ] && [ "$d" -ge 64 ] && [ "$d" -le 79 ]
}
while read -r ip4; do
	[ -n "$ip4" ] || continue
	! in_subnet "${ip4%/*}" || die "the root namespace already uses $ip4, inside $subnet; refusing to build hosts there"
done < <(ip -4 -o addr show | awk '{print $4}'; ip -4 route show | awk '{for (i = 1; i < NF; i++) if ($i == "via") print $(i+1)}')

# --- cleanup of exactly what this run created ---
created_ns=()
created_links=()
tmp=""
cleanup() {
	local rc=$? n pids l
	set +e
	# Every process still in our namespaces is ours (a launcher or rank
	# that outlived a killed test binary).
	for n in "${created_ns[@]}"; do
		pids=$(ip netns pids "$n" 2>/dev/null)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null
	done
	# Links first (deleting one end of a veth pair deletes both), then the
	# namespaces, which then hold nothing but their lo.
	for l in "${created_links[@]}"; do
		ip link del "$l" 2>/dev/null
	done
	for n in "${created_ns[@]}"; do
		ip netns del "$n" 2>/dev/null
	done
	local left=()
	for l in "${created_links[@]}"; do
		ip link show "$l" >/dev/null 2>&1 && left+=("link $l")
	done
	for n in "${created_ns[@]}"; do
		[ ! -e "/run/netns/$n" ] || left+=("namespace $n")
	done
	if [ "${#left[@]}" != 0 ]; then
		echo "multihost.sh: could not remove ${left[*]}" >&2
		[ "$rc" != 0 ] || rc=1
	fi
	[ -z "$tmp" ] || rm -rf "$tmp"
	if [ "$rc" != 0 ]; then
		echo "multihost.sh: FAILED (exit $rc); hosts removed" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

tmp=$(mktemp -d /tmp/hataori-multihost.XXXXXX)

# --- the test binaries, built before any host exists ---
started=$(date +%s)
if [ "$mode" = suite ]; then
	eval "$(HATAORI_REQUIRE_MPI=1 scripts/build-wrappers.sh)" || die "could not build the MPIABI wrappers"
	export HATAORI_WRAPPER_OPENMPI HATAORI_WRAPPER_MPICH
	# build DIR BACKEND [env...]: compile the test binaries of one backend.
	build() {
		local d=$1 b=$2
		shift 2
		mkdir -p "$tmp/$d"
		env "$@" go test -c -o "$tmp/$d/" -tags "$b,hataoridebug" ./hataori ./lanes ./hataori/mpitest ||
			die "building the $d test binaries failed"
	}
	build mpirt mpirt CGO_ENABLED=0
	build mpicgo-openmpi mpicgo CC=mpicc
	build mpicgo-mpich mpicgo CC=mpicc.mpich
	echo "multihost.sh: test binaries built in $(($(date +%s) - started)) s"
fi

# --- the hosts ---
ip link add "$bridge" type bridge
created_links+=("$bridge")
# The root namespace takes no part in the test network.
sysctl -qw "net.ipv6.conf.$bridge.disable_ipv6=1"
sysctl -qw "net.ipv4.conf.$bridge.arp_ignore=8"
sysctl -qw "net.ipv4.conf.$bridge.rp_filter=1"
ip link set "$bridge" type bridge nf_call_iptables 0 nf_call_ip6tables 0 nf_call_arptables 0 2>/dev/null || true
ip link set "$bridge" up
for h in "${hosts[@]}"; do
	n=$(ns "$h") v=$(veth "$h")
	ip netns add "$n"
	created_ns+=("$n")
	ip link add "$v" type veth peer name "hp$id$h"
	created_links+=("$v")
	sysctl -qw "net.ipv6.conf.$v.disable_ipv6=1"
	ip link set "hp$id$h" netns "$n"
	ip -n "$n" link set "hp$id$h" name "$iface"
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip -n "$n" link set lo up
	ip -n "$n" addr add "${addr[$h]}/28" dev "$iface"
	ip -n "$n" link set "$iface" up
	ip link set "$v" master "$bridge" up
done
echo "multihost.sh: hosts $(for h in "${hosts[@]}"; do printf '%s=%s ' "$(ns "$h")" "${addr[$h]}"; done)on bridge $bridge" >&2

# --- the rsh agent: agent [ssh options] [user@]HOST command... ---
agent="$tmp/rsh-agent"
{
	echo '#!/bin/sh'
	echo '# rsh agent for Open MPI (plm_rsh_agent) and MPICH (-launcher-exec):'
	echo '# runs the command in the namespace of HOST with a clean environment,'
	echo '# as ssh would. Leading ssh options (Hydra passes -x) are skipped.'
	echo 'while [ $# -gt 0 ]; do'
	echo '	case "$1" in'
	echo '	-[bcDEeFIiJLlmOopQRSWw]) shift 2 ;; # ssh options with an argument'
	echo '	-*) shift ;;'
	echo '	*) break ;;'
	echo '	esac'
	echo 'done'
	echo '[ $# -ge 2 ] || { echo "rsh-agent: usage: rsh-agent [options] HOST command..." >&2; exit 255; }'
	echo 'host=${1#*@}; shift'
	echo 'case "$host" in'
	for h in "${hosts[@]}"; do
		echo "${addr[$h]}) ns=$(ns "$h") ;;"
	done
	echo '*) echo "rsh-agent: unknown host $host" >&2; exit 255 ;;'
	echo 'esac'
	echo 'exec ip netns exec "$ns" env -i PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" HOME="${HOME:-/root}" sh -c "$*"'
} >"$agent"
chmod +x "$agent"

# --- what the harness reads ---
host_list=$(for h in "${hosts[@]}"; do printf '%s:2,' "${addr[$h]}"; done)
export HATAORI_MPITEST_HOSTS=${host_list%,}
export HATAORI_MPITEST_RSH_AGENT=$agent
export HATAORI_MPITEST_TCP=$subnet
export HATAORI_MPITEST_IFACE=$iface
export MULTIHOST_AGENT=$agent MULTIHOST_SUBNET=$subnet MULTIHOST_IFACE=$iface
export MULTIHOST_ADDRS="${addr[a]} ${addr[b]}" MULTIHOST_NS="$(ns a) $(ns b)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

in_a() { ip netns exec "$(ns a)" "$@"; }

if [ "$mode" = command ]; then
	in_a "$@"
	exit
fi
# --- the suite ---
export HATAORI_REQUIRE_MPI=1 # a missing MPI fails the jobs instead of skipping them
# The logs of the last run stay in build/multihost (HATAORI_BUILD_DIR).
logs="${HATAORI_BUILD_DIR:-$root/build}/multihost"
rm -rf "$logs"
mkdir -p "$logs"

failed=()
# run LABEL BIN PKGDIR LIMIT PATTERN EXPECTED...: run the tests of one test
# binary inside the first host, bounded by LIMIT seconds (then the binary
# is killed; the cleanup kills whatever it left in the namespaces), and
# require a "--- PASS" line for every EXPECTED test, so that a pattern that
# matches nothing cannot pass.
run() {
	local label=$1 bin=$2 dir=$3 limit=$4 pattern=$5 t0 rc=0 e missing=()
	shift 5
	local log="$logs/$label.log"
	t0=$(date +%s)
	# In the background, so that a TERM or INT to this script runs the
	# cleanup at once (bash defers traps until a foreground child ends).
	(cd "$root/$dir" && exec timeout -k 10 "$limit" ip netns exec "$(ns a)" "$bin" \
		-test.run "$pattern" -test.count=1 -test.v -test.timeout="$((limit - 10))s") >"$log" 2>&1 &
	wait $! || rc=$?
	for e in "$@"; do
		grep -qF -- "--- PASS: $e (" "$log" || missing+=("$e")
	done
	if [ "$rc" != 0 ] || [ "${#missing[@]}" != 0 ]; then
		cat "$log"
		echo "multihost.sh: $label: FAILED (exit $rc${missing:+; did not pass: ${missing[*]}}) after $(($(date +%s) - t0)) s"
		failed+=("$label")
		return 0
	fi
	echo "multihost.sh: $label: passed in $(($(date +%s) - t0)) s (log: $log):"
	grep -E -- "--- (PASS|SKIP): .*-n4 \(" "$log" | sed 's/^ */    /'
}

# suite LABEL BINDIR LAUNCHER: the multi-host suite under one launcher.
suite() {
	local label=$1 d=$2 l=$3
	run "$label-hataori" "$d/hataori.test" hataori 300 \
		"^(TestPmapMPI|TestPmapErrors|TestCollectiveMPI|TestDataMPI|TestPmapPanicEndsJobWithin10s|TestPmapKilledRankEndsJob|TestPmapSlotsAtOnce|TestPmapRootAnswersWhileComputing|TestPmapPrefetch)\$/^$l-n4\$" \
		"TestPmapMPI/$l-n4" "TestPmapErrors/$l-n4" "TestCollectiveMPI/$l-n4" "TestDataMPI/$l-n4" \
		"TestPmapPanicEndsJobWithin10s/$l-n4" "TestPmapKilledRankEndsJob/$l-n4" \
		"TestPmapSlotsAtOnce/$l-n4" "TestPmapRootAnswersWhileComputing/$l-n4" "TestPmapPrefetch/$l-n4"
	run "$label-lanes" "$d/lanes.test" lanes 200 "^TestPmapLanesRanks\$/^ranks4-lanes2\$/^$l-n4\$" \
		"TestPmapLanesRanks/ranks4-lanes2/$l-n4"
	run "$label-lanes-at-once" "$d/lanes.test" lanes 120 "^TestPmapLanesAtOnce\$/^$l-n4\$" \
		"TestPmapLanesAtOnce/$l-n4"
	run "$label-mpitest" "$d/mpitest.test" hataori/mpitest 120 "^(TestHarnessSpreadsOverHosts|TestRing)\$/^$l-n4\$" \
		"TestHarnessSpreadsOverHosts/$l-n4" "TestRing/$l-n4"
}

echo "== multi-host suite: 4 ranks on hosts $HATAORI_MPITEST_HOSTS"
suite "openmpi-mpirt" "$tmp/mpirt" openmpi
suite "openmpi-mpicgo" "$tmp/mpicgo-openmpi" openmpi
# MPICH: Hydra starts one proxy per host through the agent (-launcher ssh
# -launcher-exec, -hosts, -iface for its own TCP control traffic). Between
# ranks, MPICH 4.0.2's UCX 1.13.1 sees one machine and uses shared memory
# (sysv/cma) across the namespaces; forcing UCX onto TCP (UCX_TLS=tcp,self)
# hangs a rank in MPI_Finalize in many jobs, on one host over lo as well
# (openucx/ucx#8738), so it is not done here.
suite "mpich-mpirt" "$tmp/mpirt" mpich
suite "mpich-mpicgo" "$tmp/mpicgo-mpich" mpich

if [ "${#failed[@]}" != 0 ]; then
	die "failed: ${failed[*]}"
fi
echo "multihost.sh: the multi-host suite passed in $(($(date +%s) - started)) s"
