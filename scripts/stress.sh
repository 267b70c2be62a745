#!/usr/bin/env bash
# stress.sh: run named multi-rank tests again and again, in a row, and stop
# at the first failure, printing its whole output. Not part of
# scripts/test.sh or CI: it is the acceptance check for tests that must not
# depend on the schedule (a test that fails now and then is a bug, never
# something to retry until it passes).
#
# Each run is one execution of a test binary built once up front, exactly as
# `go test` would run it (in the package's directory, -test.count=1,
# -test.shuffle=on: a new order every run, whose seed the run prints),
# bounded by `timeout`; a run passes when the binary exits 0 AND prints a
# "--- PASS" line for every selected test (and subtest), so that a pattern
# that matches nothing cannot pass. At the end (or at the failure) it prints
# the pass count and the time of every run.
#
# Usage:
#   scripts/stress.sh [options] [TEST...]
#       One host. Defaults: 12 runs of TestPmapFailingIndex,
#       TestPmapCallContext, TestPmapCollectAll and TestPmapErrors (all four
#       in each run), cgo backend linked against MPICH, -race: what CI runs
#       as CC=mpicc.mpich go test -race -shuffle=on -count=1 \
#                 -tags mpicgo,hataoridebug ./hataori/
#   scripts/stress.sh --multihost [options] [TEST...]
#       Across the two network-namespace hosts of scripts/multihost.sh (as
#       root; the hosts are built once and every run happens inside the
#       first one, as multihost.sh's suite does): 4-rank subtests only.
#       Defaults: 20 runs of TestPmapPrefetch, run-time backend, under Open
#       MPI and MPICH in each run (subtests ^openmpi-n4$ and ^mpich-n4$,
#       as in '^TestPmapPrefetch$/^(openmpi-n4|mpich-n4)$').
#
# Options:
#   -n N        runs (default 12; 20 with --multihost)
#   -t SECONDS  bound of one run (default 900; 300 with --multihost); the
#               test binary gets -test.timeout 10 s shorter, so it dumps
#               its goroutines first
#   -b BACKEND  cgo-mpich (default on one host), cgo-openmpi, or mpirt
#               (default with --multihost; runs both MPIs)
#   -p PKG      the package of the tests (default ./hataori)
#   --race, --no-race
#               build with or without -race (default: with on one host, as
#               CI; without with --multihost, as multihost.sh's suite)
#
# Logs: ${HATAORI_BUILD_DIR:-build}/stress/run-N.log, one per run (the
# directory is emptied first).
set -euo pipefail

die() {
	echo "stress.sh: FAIL: $*" >&2
	exit 1
}

usage() {
	sed -n '/^# Usage:/,/^# Logs:/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

multihost=0 runs="" limit="" backend="" pkg=./hataori race=default inner=0
while [ $# -gt 0 ]; do
	case "$1" in
	--multihost) multihost=1 ;;
	--inner) inner=1 ;; # internal: the loop itself, inside the first host
	-n) runs=${2:?-n needs a count}; shift ;;
	-t) limit=${2:?-t needs seconds}; shift ;;
	-b) backend=${2:?-b needs a backend}; shift ;;
	-p) pkg=${2:?-p needs a package}; shift ;;
	--race) race=-race ;;
	--no-race) race="" ;;
	-h | --help) usage ;;
	--) shift; break ;;
	-*) echo "stress.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
	shift
done
tests=("$@")
if [ "$multihost" = 1 ]; then
	: "${runs:=20}" "${limit:=300}" "${backend:=mpirt}"
	[ "$race" != default ] || race=""
	[ "${#tests[@]}" != 0 ] || tests=(TestPmapPrefetch)
else
	: "${runs:=12}" "${limit:=900}" "${backend:=cgo-mpich}"
	[ "$race" != default ] || race=-race
	[ "${#tests[@]}" != 0 ] || tests=(TestPmapFailingIndex TestPmapCallContext TestPmapCollectAll TestPmapErrors)
fi
case "$runs$limit" in *[!0-9]*) die "-n and -t take whole numbers" ;; esac
[ "$runs" -ge 1 ] && [ "$limit" -gt 10 ] || die "need -n >= 1 and -t > 10"

cd "$(dirname "$0")/.."
root=$(pwd)
logs="${HATAORI_BUILD_DIR:-$root/build}/stress"

# The selection and the "--- PASS" lines each run must print.
pattern="^($(IFS='|'; echo "${tests[*]}"))\$"
want=()
if [ "$multihost" = 1 ]; then
	case "$backend" in
	mpirt) subs=(openmpi-n4 mpich-n4) ;;
	cgo-openmpi) subs=(openmpi-n4) ;;
	cgo-mpich) subs=(mpich-n4) ;;
	*) die "unknown backend $backend (cgo-mpich, cgo-openmpi, mpirt)" ;;
	esac
	pattern="$pattern/^($(IFS='|'; echo "${subs[*]}"))\$"
	for t in "${tests[@]}"; do
		for s in "${subs[@]}"; do want+=("$t/$s"); done
	done
else
	want=("${tests[@]}")
fi

# loop BIN: the runs themselves (on this host, or inside the first host).
loop() {
	local bin=$1 i t0 el rc missing w passed=0 secs=()
	local dir="$root/${pkg#./}"
	for ((i = 1; i <= runs; i++)); do
		local log="$logs/run-$i.log"
		t0=$(date +%s)
		rc=0
		# In the background, so that a TERM or INT to this script is seen
		# at once (bash defers traps until a foreground child ends).
		(cd "$dir" && exec timeout -k 10 "$limit" "$bin" -test.run "$pattern" -test.count=1 \
			-test.shuffle=on -test.v -test.timeout="$((limit - 10))s") >"$log" 2>&1 &
		wait $! || rc=$?
		el=$(($(date +%s) - t0))
		secs+=("$el")
		missing=()
		for w in "${want[@]}"; do
			grep -qF -- "--- PASS: $w (" "$log" || missing+=("$w")
		done
		if [ "$rc" != 0 ] || [ "${#missing[@]}" != 0 ]; then
			cat "$log"
			echo
			[ "$rc" != 124 ] && [ "$rc" != 137 ] || echo "stress.sh: run $i hit its $limit s bound"
			echo "stress.sh: run $i of $runs FAILED (exit $rc${missing:+; did not pass: ${missing[*]}}) after $el s (log: $log)"
			echo "stress.sh: $passed passed in a row before it; seconds per run: ${secs[*]}"
			return 1
		fi
		passed=$((passed + 1))
		echo "stress.sh: run $i of $runs passed in $el s ($(grep -m1 -o -- '-test.shuffle [0-9]*' "$log" || echo 'seed not printed'))"
	done
	local sorted total=0
	for el in "${secs[@]}"; do total=$((total + el)); done
	sorted=$(printf '%s\n' "${secs[@]}" | sort -n | tr '\n' ' ')
	echo "stress.sh: $passed of $runs runs passed in a row (${want[*]}); seconds per run: ${secs[*]};" \
		"min $(echo "$sorted" | cut -d' ' -f1), max $(echo "$sorted" | awk '{print $NF}'), mean $((total / runs))"
}

if [ "$inner" = 1 ]; then
	# Inside the first host: the binary was built and logs emptied outside.
	loop "${STRESS_BIN:?}"
	exit
fi

export PATH="/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin:$PATH"
command -v timeout >/dev/null 2>&1 || die "'timeout' not found in PATH=$PATH"
eval "$(HATAORI_REQUIRE_MPI=1 scripts/build-wrappers.sh)" || die "could not build the MPIABI wrappers"
export HATAORI_WRAPPER_OPENMPI HATAORI_WRAPPER_MPICH HATAORI_REQUIRE_MPI=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

tmp=$(mktemp -d /tmp/hataori-stress.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
bin="$tmp/pkg.test"
case "$backend" in
cgo-mpich) build=(env CC=mpicc.mpich go test -c $race -tags mpicgo,hataoridebug) ;;
cgo-openmpi) build=(env CC=mpicc go test -c $race -tags mpicgo,hataoridebug) ;;
mpirt) build=(go test -c $race -tags mpirt,hataoridebug) ;;
*) die "unknown backend $backend (cgo-mpich, cgo-openmpi, mpirt)" ;;
esac
t0=$(date +%s)
"${build[@]}" -o "$bin" "$pkg" || die "building the test binary of $pkg failed: ${build[*]}"
echo "stress.sh: built $pkg (${build[*]}) in $(($(date +%s) - t0)) s; $runs runs of $pattern, each bounded by $limit s"
rm -rf "$logs"
mkdir -p "$logs"

if [ "$multihost" = 1 ]; then
	args=(-n "$runs" -t "$limit" -b "$backend" -p "$pkg")
	scripts/multihost.sh -- env STRESS_BIN="$bin" HATAORI_BUILD_DIR="${HATAORI_BUILD_DIR:-$root/build}" \
		"$root/scripts/stress.sh" --inner --multihost "${args[@]}" -- "${tests[@]}"
else
	loop "$bin"
fi
