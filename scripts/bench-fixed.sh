#!/usr/bin/env bash
# bench-fixed.sh: the fixed cost of cheap collective calls (issue 12, "cheap
# collectives"; issue 21, "cheap calls"), scripts/bench/fixed: an 8-item Pmap
# with a trivial callback, MPI-only and hybrid (NewLocalDomain + Outer on
# every rank), and an 8-byte Broadcast (one int64), against the raw MPI
# collectives such a call needs (MPI_Comm_dup + one MPI_Allreduce of 8 int64
# with MPI_MIN + MPI_Comm_free), all four in the same run, interleaved
# repetition by repetition (order shuffled), the slowest rank's time per
# repetition, median of REPS (default 21, at least 15), at 2 and 4 ranks
# under Open MPI (mpirun --oversubscribe) and MPICH (mpiexec.mpich).
# BACKEND rt is the run-time backend (-tags mpirt, CGO_ENABLED=0; the raw
# baseline goes through the MPIABI wrapper), cgo the cgo backend (-tags
# mpicgo, CC=mpicc or CC=mpicc.mpich; the raw baseline is called from C on
# the linked MPI), both runs the two launch after launch for each MPI and
# rank count. Prints each run's table, then one summary line per run: raw
# µs, Pmap µs (MPI-only, hybrid), Broadcast µs, the ratios to raw (aim
# <= 2.0) and the items each rank ran in the Pmap calls.
#
# Usage: scripts/bench-fixed.sh [openmpi|mpich|both] [REPS] [rt|cgo|both]
#   (defaults: both, 21, rt)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-both}"
reps="${2:-21}"
backends="${3:-rt}"
case "$backends" in
rt) backends=(rt) ;;
cgo) backends=(cgo) ;;
both) backends=(rt cgo) ;;
*) echo "unknown backend $backends (rt, cgo or both)" >&2; exit 2 ;;
esac
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_HANDLE_ERRORS=none
eval "$(scripts/build-wrappers.sh)"
mkdir -p build
for b in "${backends[@]}"; do
	case "$b" in
	rt) CGO_ENABLED=0 go build -tags mpirt -o build/bench-fixed ./scripts/bench/fixed ;;
	cgo)
		if [ "$which" = both ] || [ "$which" = openmpi ]; then
			CC=mpicc go build -tags mpicgo -o build/bench-fixed-cgo-openmpi ./scripts/bench/fixed
		fi
		if [ "$which" = both ] || [ "$which" = mpich ]; then
			CC=mpicc.mpich go build -tags mpicgo -o build/bench-fixed-cgo-mpich ./scripts/bench/fixed
		fi ;;
	esac
done
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
. scripts/bench/run.sh
run() { bench_run "$1" '^  fixed ' '^  fixed [0-9]* ranks: ' "${@:2}"; }
for n in 2 4; do
	for b in "${backends[@]}"; do
		if [ "$which" = both ] || [ "$which" = openmpi ]; then
			if [ "$b" = rt ]; then
				run "Open MPI, $n ranks, rt" timeout 300 mpirun --oversubscribe -n "$n" -x MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" build/bench-fixed -reps "$reps"
			else
				run "Open MPI, $n ranks, cgo" timeout 300 mpirun --oversubscribe -n "$n" build/bench-fixed-cgo-openmpi -reps "$reps"
			fi
		fi
	done
	for b in "${backends[@]}"; do
		if [ "$which" = both ] || [ "$which" = mpich ]; then
			if [ "$b" = rt ]; then
				run "MPICH, $n ranks, rt" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" timeout 300 mpiexec.mpich -n "$n" build/bench-fixed -reps "$reps"
			else
				run "MPICH, $n ranks, cgo" timeout 300 mpiexec.mpich -n "$n" build/bench-fixed-cgo-mpich -reps "$reps"
			fi
		fi
	done
done
bench_summary
