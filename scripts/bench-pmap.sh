#!/usr/bin/env bash
# bench-pmap.sh: hataori.Pmap benchmarks under real mpirun, each figure
# printed next to a baseline measured in the same run, with the items every
# rank and every slot ran and their batch sizes (Options.Stats on the root:
# CallStats.Items and CallStats.Sizes, per rank as min/median/max×batches,
# per slot likewise), the slots' busy/idle time (CallStats.Busy, Idle), and
# every rank's allowed CPUs and GOMAXPROCS (scripts/bench/pmap). Every case
# runs the configurations a user writes from the README, with a zero
# Options{} (automatic batch sizes, Mode Auto): MPI-only (nil domain on every
# rank), hybrid (NewLocalDomain on every rank, the zero Mode, i.e. Outer)
# and, for cpu and fine, lanes (one engine per allowed CPU,
# lanes.PmapLanes). The cpu, fine, skew and mixed cases also run batch 1
# (Options{BatchSize: 1}) in the same run, interleaved, for comparison
# ("auto" and "b1" in the output; the aims apply to auto). Each
# configuration runs ROUNDS times, interleaved with the others; the median
# is reported, with the range (min, max) over the rounds.
#   cpu       20,000 CPU-bound items of ~20 µs (a deterministic arithmetic
#             loop calibrated once per run), on 2, 4 and 1 ranks:
#             efficiency = items × serial cost per item ÷ cores used ÷ Pmap
#             wall time, the serial cost measured by a plain loop on every
#             rank right before and right after each call (all ranks at
#             once; in turns when the ranks outnumber the CPUs, so that 4
#             ranks on 2 cores do not see a doubled item cost). On one core
#             that is the call's speed as a fraction of the serial loop's.
#             Also printed "by CPU cost" (the serial loop's thread CPU time
#             per item instead of its wall time): on a machine shared with
#             other jobs the one-thread serial loop can be starved more than
#             the call, which inflates the first figure, while the second
#             counts time lost to neighbours against Pmap; they agree on a
#             quiet machine. Per rank: items and batch sizes per slot, busy
#             and idle time, CPU time per wall second and the share of it
#             the items needed (useful/CPU). Aim (auto): >= 0.90 of ideal
#             on 2 ranks (MPI-only and hybrid, default binding; hybrid also
#             under the other binding), >= 0.85 with 4 ranks on the 2
#             cores, >= 0.95 of the serial loop's speed on 1 rank bound to
#             one core (1 rank with 2 workers: >= 0.85).
#   fine      as cpu with 100,000 items of ~2 µs, 2 ranks. Aim (auto): >=
#             0.80 of ideal.
#   skew      64 heavy-tailed sleep items (Pareto, 2 s in all) on 4 ranks:
#             makespan against a zero-overhead greedy schedule of the
#             durations the items really slept (list scheduling in input
#             order onto the first free of as many machines as the call had
#             slots, the sum over the ranks); a static split executed for
#             real. Aim (auto): Pmap/greedy <= 1.03 (MPI-only and hybrid),
#             static/Pmap >= 1.3.
#   mixed     about 4,000 CPU-bound items of 10 µs to 10 ms (a fixed-seed
#             lognormal of spin costs, median 150 µs, sigma 1.6, clamped,
#             about 2 s of CPU in all; independent draws, so shuffled) on 2
#             and 4 ranks. Greedy for CPU items: each item measures its own
#             duration in its callback, from its first to its last
#             instruction, by the wall clock (what it took where it ran, a
#             shared core included) and by its thread's CPU clock; greedy
#             is the zero-overhead list schedule of those durations, in
#             input order, onto the first free of as many machines as can
#             compute at once: the call's slots (as skew), over the wall
#             times, while they are at most the node's CPUs; the CPUs, over
#             the CPU times, when the slots outnumber them (4 ranks on 2
#             cores: there a wall time counts the time the core served
#             other slots, by a share that varies along the call, so greedy
#             over wall times on 4 slots falls below what 2 cores can do;
#             it is still printed). Also printed: Pmap ÷ max(sum/machines,
#             longest), Pmap ÷ (the nominal 2 s ÷ machines), and the
#             measured wall total ÷ the nominal 2 s (above 1: the items'
#             cores were shared). And in every round, for comparison, the
#             same items dealt through a counter in shared memory (every
#             rank takes one item at a time: no message, no coordinator, no
#             batch; the bound of any dealing on the node): its time ÷ its
#             own greedy, and Pmap ÷ its time. Aim (auto): Pmap/greedy <=
#             1.05.
#   trivial   200,000 trivial items (x+1) on 2 ranks, zero Options, hybrid
#             (the figure), MPI-only, and hybrid at batch 1: µs/item next to
#             the MPI ping-pong round trip and a plain loop of the callback
#             on the root. Aim: hybrid <= 0.1 µs/item.
#   overhead  20,000 trivial items, automatic sizes, batch 1 and 64, 2 and
#             4 ranks: µs/item next to the MPI ping-pong round trip. Aim:
#             hybrid batch 1 on 2 ranks <= 3 µs/item.
#   payload   1 MiB []float64 results on 2 ranks, zero Options. Baseline
#             "raw": rank 1 allocates a fresh 1 MiB []float64, writes every
#             element and MPI_Sends it; rank 0 receives it into a fresh
#             []float64 and keeps it (as Pmap's result table does). Pmap
#             computes the same results in its callback; the root's own
#             slots are held back until the expected end of the remote work
#             (estimated from the previous call, never a fixed sleep), so
#             nearly every result crosses ranks. Printed per round (raw and
#             Pmap alternate): the effective figure (results that crossed /
#             whole call time: scheduling, encode, transfer and decode
#             included) and the remote rank's steady-state time per result,
#             each as a fraction of raw; then the medians. The "transport
#             ceiling" line (one buffer re-sent, no allocation) shows what
#             MPI alone moves; it is not the ratio's baseline.
#   remote    64 items of ~300 µs (the callback fills a fresh 1 MiB
#             []float64 result, then spins until 300 µs have passed) on 2
#             ranks, zero Options, nothing held back, so the other rank
#             takes part on its own: the remote rank's result path (its time
#             per result minus the callback's time: the 1 MiB RESULT frame to
#             the root and the next TASK back) as a bandwidth, MPI-only,
#             hybrid and MPI-only with a sleeping callback (the root's core
#             left to its coordinator), against the 1 MiB bandwidth of the C
#             ping-pong (scripts/bench/pingpong.c, built with the MPI's own
#             compiler) measured in the same script run: C and Pmap
#             launches alternate, ROUNDS (at least 7) pairs, each Pmap launch
#             3 calls per configuration after a warm-up (its median), each C
#             launch the best of 3 repetitions of 500 round trips (as
#             bench-pingpong.sh); the medians over the launches, their ratio
#             (aim >= 0.5) and the items per rank. Default binding only.
#   hooks     100,000 trivial items, batch 1, 2 ranks, MPI-only and hybrid:
#             each call plain and with Options.OnProgress (a hook storing
#             the count, default interval) and Options.Stats, interleaved
#             with the order alternating per round; the ratio of the median
#             per-item times. Aim: <= 1.02.
#
# Binding: every case that depends on it runs under the launcher's default
# binding and under the other one (remote and payload: default only).
# Open MPI's default binds each rank to a core when there are at most 2
# ranks (so on 2 cores each rank is allowed one CPU, NewLocalDomain has 1
# worker, GOMAXPROCS starts at 1 and Pmap raises it to 2 for the call) and
# to a socket beyond that (here: both CPUs); "--bind-to none" allows every
# rank both CPUs (NewLocalDomain: 2 workers, GOMAXPROCS 2, raised to 3 for
# a hybrid call). MPICH's mpiexec binds nothing by default; "-bind-to core"
# binds as Open MPI's default does (for 4 ranks on 2 cores: two ranks per
# core).
#
# Usage: scripts/bench-pmap.sh [openmpi|mpich] [ROUNDS] [CASE...]
#   (defaults: openmpi, 5 rounds, cases cpu fine skew mixed trivial overhead
#   payload remote hooks)
# Uses the run-time backend (-tags mpirt) and the MPIABI wrappers built by
# scripts/build-wrappers.sh. Every launcher run is bounded by timeout
# (BENCH_TIMEOUT seconds, default 240); a run that times out is reported as
# FAILED with exit status 124 and the script goes on.
# About 10-15 minutes for every case at 5 rounds on 2 cores (more when the
# machine is loaded); cpu alone about 4 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
mpi="${1:-openmpi}"
rounds="${2:-5}"
tmo="${BENCH_TIMEOUT:-240}" # seconds per launcher run
shift $(( $# > 2 ? 2 : $# ))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(cpu fine skew mixed trivial overhead payload remote hooks)
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
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout "$tmo" \
			mpirun --oversubscribe ${bind[@]+"${bind[@]}"} -n "$2" env MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" \
			"$bin" -case "$3" -rounds "$rounds" >"$out" || rc=$? ;;
	mpich)
		UCX_HANDLE_ERRORS=none timeout "$tmo" \
			mpiexec.mpich ${bind[@]+"${bind[@]}"} -n "$2" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" \
			"$bin" -case "$3" -rounds "$rounds" >"$out" || rc=$? ;;
	esac
	cat "$out"
	# The summary lines, labelled with the run.
	grep -E '^  (cpu|fine|skew|mixed|trivial|overhead|payload|remote|hooks) ' "$out" | sed "s|^  |[$mpi n=$2 bind=$name] |" >>"$tmp/summary" || true
	if [ "$rc" != 0 ]; then
		echo "== FAILED: $3 on $2 ranks, binding $name: exit status $rc" | tee -a "$tmp/summary"
	fi
}

# launch RANKS ARGS...: the default-binding launcher of $mpi.
launch() {
	local n="$1"
	shift
	case "$mpi" in
	openmpi)
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout "$tmo" \
			mpirun --oversubscribe -n "$n" env MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" "$@" ;;
	mpich)
		UCX_HANDLE_ERRORS=none timeout "$tmo" mpiexec.mpich -n "$n" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" "$@" ;;
	esac
}

# remote_case: C ping-pong and Pmap (case remote) launches alternating,
# max(ROUNDS, 7) pairs; medians over the launches and their ratio.
remote_case() {
	local pairs=$(( rounds < 7 ? 7 : rounds )) cc=mpicc
	[ "$mpi" = mpich ] && cc=mpicc.mpich
	"$cc" -O2 -o "$tmp/pingpong-c" scripts/bench/pingpong.c
	echo "== remote, 2 ranks, $mpi, default binding, $pairs launch pairs (C ping-pong, then Pmap); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	: >"$tmp/c.txt"
	: >"$tmp/p.txt"
	for ((i = 1; i <= pairs; i++)); do
		launch 2 "$tmp/pingpong-c" 3 1 >"$tmp/c.out" || { echo "== FAILED: C ping-pong" | tee -a "$tmp/summary"; return; }
		awk '$1 == "RESULT" && $2 == "size=1048576" { sub("mbps=", "", $5); print $5 }' "$tmp/c.out" >>"$tmp/c.txt"
		launch 2 "$bin" -case remote -rounds 3 >"$tmp/p.out" || { cat "$tmp/p.out"; echo "== FAILED: remote" | tee -a "$tmp/summary"; return; }
		[ "$i" = 1 ] && grep -v '^REMOTE' "$tmp/p.out"
		grep '^REMOTE' "$tmp/p.out" >>"$tmp/p.txt"
		printf '  pair %d: C 1 MiB %s MB/s; Pmap result path %s\n' "$i" "$(tail -1 "$tmp/c.txt")" \
			"$(grep '^REMOTE' "$tmp/p.out" | awk '{ printf "%s %s MB/s  ", $2, $4 }' | sed 's/config=//g; s/mbps=//g')"
	done
	awk -v mpi="$mpi" -v pairs="$pairs" '
		function med(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		FNR == NR { c[++nc] = $1; next }
		{
			split($2, kv, "="); cfg = kv[2]; split($4, kv, "="); v = kv[2]; split($5, kv, "="); it = kv[2]
			if (!(cfg in n)) order[++no] = cfg
			bw[cfg, ++n[cfg]] = v; items[cfg] = items[cfg] " " it
		}
		END {
			cm = med(c, nc)
			printf "  remote C ping-pong 1 MiB: median %.0f MB/s over %d launches\n", cm, nc
			for (k = 1; k <= no; k++) {
				cfg = order[k]; m = n[cfg]
				for (i = 1; i <= m; i++) { x[i] = bw[cfg, i]; r[i] = bw[cfg, i] / c[i] }
				pm = med(x, m); rm = med(r, m)
				printf "  remote %-14s result path median %.0f MB/s = %.3f of C (median of per-pair ratios %.3f; aim >= 0.5); items per rank (last call of each launch):%s\n", cfg, pm, pm / cm, rm, items[cfg]
			}
		}' "$tmp/c.txt" "$tmp/p.txt" | tee "$tmp/remote.sum"
	sed "s|^  |[$mpi n=2 bind=default] |" "$tmp/remote.sum" >>"$tmp/summary"
}

echo "== Pmap benchmarks ($mpi, $(nproc) CPUs, run-time backend, $rounds rounds per configuration)"
for c in "${cases[@]}"; do
	case "$c" in
	cpu)
		run default 2 cpu
		run alt 2 cpu
		run default 4 cpu
		run alt 4 cpu
		run default 1 cpu
		run alt 1 cpu ;;
	fine)
		run default 2 fine
		run alt 2 fine ;;
	skew)
		run default 4 skew
		run alt 4 skew ;;
	mixed)
		run default 2 mixed
		run alt 2 mixed
		run default 4 mixed ;;
	trivial)
		run default 2 trivial
		run alt 2 trivial ;;
	overhead)
		run default 2 overhead
		run alt 2 overhead
		run default 4 overhead ;;
	payload)
		run default 2 payload ;;
	remote)
		remote_case ;;
	hooks)
		run default 2 hooks
		run alt 2 hooks ;;
	*) echo "unknown case $c" >&2; exit 2 ;;
	esac
done
echo
echo "== summary ($mpi; load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$tmp/summary"
