#!/usr/bin/env bash
# bench-fixed.sh: the fixed cost of cheap collective calls (issue 12, "cheap
# collectives"), scripts/bench/fixed: an 8-item MPI-only Pmap with a trivial
# callback and an 8-byte Broadcast (one int64), against the raw MPI
# collectives such a call needs (MPI_Comm_dup + one MPI_Allreduce of 8 int64
# with MPI_MIN + MPI_Comm_free), all three in the same run, interleaved
# repetition by repetition (order shuffled), the slowest rank's time per
# repetition, median of REPS (default 21, at least 15), at 2 and 4 ranks
# under Open MPI (mpirun --oversubscribe) and MPICH (mpiexec.mpich), with the
# run-time backend. Prints each run's table, then one summary line per run:
# raw µs, Pmap µs, Broadcast µs, the ratios to raw (aim <= 2.0) and the
# items each rank ran in the Pmap calls.
#
# Usage: scripts/bench-fixed.sh [openmpi|mpich|both] [REPS]  (defaults: both, 21)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-both}"
reps="${2:-21}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_HANDLE_ERRORS=none
eval "$(scripts/build-wrappers.sh)"
mkdir -p build
CGO_ENABLED=0 go build -tags mpirt -o build/bench-fixed ./scripts/bench/fixed
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
. scripts/bench/run.sh
run() { bench_run "$1" '^  fixed ' '^  fixed [0-9]* ranks: ' "${@:2}"; }
for n in 2 4; do
	if [ "$which" = both ] || [ "$which" = openmpi ]; then
		run "Open MPI, $n ranks" timeout 300 mpirun --oversubscribe -n "$n" -x MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" build/bench-fixed -reps "$reps"
	fi
	if [ "$which" = both ] || [ "$which" = mpich ]; then
		run "MPICH, $n ranks" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" timeout 300 mpiexec.mpich -n "$n" build/bench-fixed -reps "$reps"
	fi
done
bench_summary
