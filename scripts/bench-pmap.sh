#!/usr/bin/env bash
# bench-pmap.sh: hataori.Pmap benchmarks under real mpirun, each figure
# printed next to a baseline measured in the same run, with the items every
# slot of every rank ran (Options.Stats on the root) and every rank's
# allowed CPUs and GOMAXPROCS (scripts/bench/pmap). Every case runs
# the configurations a user writes from the README: MPI-only (nil domain),
# hybrid (NewLocalDomain on every rank, Mode Outer) and, for cpu, lanes
# (one engine per allowed CPU, lanes.PmapLanes). Each configuration runs
# ROUNDS times, interleaved with the others; the median is reported.
#   cpu       20,000 CPU-bound items of ~20 µs (a deterministic arithmetic
#             loop calibrated once per run), batch 1, on 2 ranks and on 1
#             rank: efficiency = items × serial cost per item ÷ cores used ÷
#             Pmap wall time, the serial cost measured by a plain loop on
#             every rank right before and right after each call. On one
#             core that is the call's speed as a fraction of the serial
#             loop's. Also printed "by CPU cost" (the serial loop's thread
#             CPU time per item instead of its wall time): on a machine
#             shared with other jobs the one-thread serial loop can be
#             starved more than the call, which inflates the first figure,
#             while the second counts time lost to neighbours against Pmap;
#             they agree on a quiet machine. Per rank: items per slot, CPU
#             time per wall second and the share of it the items needed
#             (useful/CPU). Aim: >= 0.85 on 2 ranks and on 1 rank with 2
#             workers, >= 0.90 of serial speed on 1 rank bound to one core.
#   skew      64 heavy-tailed sleep items on 4 ranks, batch 1: makespan
#             against a zero-overhead greedy schedule of the durations the
#             items really slept, on as many machines as the call had slots
#             (the sum over the ranks); a static split executed for real.
#             Aim: Pmap/greedy <= 1.08, static/Pmap >= 1.3.
#   overhead  20,000 trivial items, batch 1 and 64, 2 and 4 ranks: µs/item
#             next to the MPI ping-pong round trip. Aim: hybrid batch 1 on
#             2 ranks <= 3 µs/item.
#   payload   1 MiB []float64 results on 2 ranks, batch 1. Baseline "raw":
#             rank 1 allocates a fresh 1 MiB []float64, writes every element
#             and MPI_Sends it; rank 0 receives it into a fresh []float64 and
#             keeps it (as Pmap's result table does). Pmap computes the same
#             results in its callback; the root's own slots are held back
#             until the expected end of the remote work (estimated from the
#             previous call, never a fixed sleep), so nearly every result
#             crosses ranks. Printed per round (raw and Pmap alternate):
#             the effective figure (results that crossed / whole call time:
#             scheduling, encode, transfer and decode included) and the
#             remote rank's steady-state time per result, each as a
#             fraction of raw; then the medians. The "transport ceiling"
#             line (one buffer re-sent, no allocation) shows what MPI alone
#             moves; it is not the ratio's baseline.
#   hooks     100,000 trivial items, batch 1, 2 ranks, MPI-only and hybrid:
#             each call plain and with Options.OnProgress (a hook storing
#             the count, default interval) and Options.Stats, interleaved
#             with the order alternating per round; the ratio of the median
#             per-item times. Aim: <= 1.02.
#
# Binding: each case that depends on it runs under the launcher's default
# binding and under the other one. Open MPI's default binds each rank to a
# core when there are at most 2 ranks (so on 2 cores each rank is allowed
# one CPU, NewLocalDomain has 1 worker, GOMAXPROCS starts at 1 and Pmap
# raises it to 2 for the call) and to a socket beyond that (here: both
# CPUs); "--bind-to none" allows every rank both CPUs (NewLocalDomain: 2
# workers, GOMAXPROCS 2, raised to 3 for a hybrid call). MPICH's
# mpiexec binds nothing by default; "-bind-to core" binds as Open MPI's
# default does.
#
# Usage: scripts/bench-pmap.sh [openmpi|mpich] [ROUNDS] [CASE...]
#   (defaults: openmpi, 5 rounds, cases cpu skew overhead payload hooks)
# Uses the run-time backend (-tags mpirt) and the MPIABI wrappers built by
# scripts/build-wrappers.sh. Every launcher run is bounded by timeout.
# About 2-4 minutes on 2 cores (more when the machine is loaded).
set -euo pipefail
cd "$(dirname "$0")/.."
mpi="${1:-openmpi}"
rounds="${2:-5}"
shift $(( $# > 2 ? 2 : $# ))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(cpu skew overhead payload hooks)
eval "$(scripts/build-wrappers.sh)"
tmp="$(mktemp -d)"
bin="$tmp/benchpmap"
trap 'rm -rf "$tmp"' EXIT
go build -tags mpirt -o "$bin" ./scripts/bench/pmap

case "$mpi" in
openmpi) alt=(--bind-to none); altname="--bind-to none"; defname="default (core for <= 2 ranks, socket beyond)" ;;
mpich) alt=(-bind-to core); altname="-bind-to core"; defname="default (none)" ;;
*) echo "unknown MPI $mpi (openmpi or mpich)" >&2; exit 2 ;;
esac

run() { # run default|alt RANKS CASE
	local bind=() name="$defname"
	if [ "$1" = alt ]; then bind=("${alt[@]}"); name="$altname"; fi
	echo "== $3, $2 ranks, $mpi, binding $name; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	local out="$tmp/out" rc=0
	case "$mpi" in
	openmpi)
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 150 \
			mpirun --oversubscribe ${bind[@]+"${bind[@]}"} -n "$2" env MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" \
			"$bin" -case "$3" -rounds "$rounds" >"$out" || rc=$? ;;
	mpich)
		UCX_HANDLE_ERRORS=none timeout 150 \
			mpiexec.mpich ${bind[@]+"${bind[@]}"} -n "$2" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" \
			"$bin" -case "$3" -rounds "$rounds" >"$out" || rc=$? ;;
	esac
	cat "$out"
	# The summary lines, labelled with the run.
	grep -E '^  (cpu|skew|overhead|payload|hooks) ' "$out" | sed "s|^  |[$mpi n=$2 bind=$name] |" >>"$tmp/summary" || true
	if [ "$rc" != 0 ]; then
		echo "== FAILED: $3 on $2 ranks, binding $name: exit status $rc" | tee -a "$tmp/summary"
	fi
}

echo "== Pmap benchmarks ($mpi, $(nproc) CPUs, run-time backend, $rounds rounds per configuration)"
for c in "${cases[@]}"; do
	case "$c" in
	cpu)
		run default 2 cpu
		run alt 2 cpu
		run default 1 cpu
		run alt 1 cpu ;;
	skew)
		run default 4 skew ;;
	overhead)
		run default 2 overhead
		run alt 2 overhead
		run default 4 overhead ;;
	payload)
		run default 2 payload ;;
	hooks)
		run default 2 hooks
		run alt 2 hooks ;;
	*) echo "unknown case $c" >&2; exit 2 ;;
	esac
done
echo
echo "== summary ($mpi; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$tmp/summary"
