#!/usr/bin/env bash
# bench-collectives.sh: bandwidth of Broadcast and Gather ([]float64 and
# []byte, 1 MiB and 64 MiB) against raw MPI (MPI_Bcast, Send/Recv, into one
# reused buffer and into fresh receive buffers of the call's type, as a call
# returning new values must) measured in the same run, interleaved
# repetition by repetition in a shuffled order, the heap's free memory
# returned to the OS before each operation so that every one allocates from
# the same state (median of 20 repetitions at 1 MiB, 9 at 64 MiB), plus the
# one-message vs two-message frame layout, on 2 and 4 ranks, under Open MPI
# and (unless MPICH=0) MPICH (scripts/bench/collectives). Ends with one
# summary line per run: Broadcast []float64 and Gather []float64 against the
# raw fresh-buffer baselines (aim at 64 MiB: <= 1.10x).
#
# The raw baselines call MPI through the public mpiabi binding on Hataori's
# world communicator, so only the run-time backend is measured (the cgo
# variant, BACKEND=mpicgo, went with the move out of hataori/internal; see
# scripts/bench-pingpong.sh for the cgo backend against C).
#
# Usage: scripts/bench-collectives.sh [extra collectives flags, e.g. -reps 10 -large-reps 15]
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_HANDLE_ERRORS=none
eval "$(scripts/build-wrappers.sh)"
CGO_ENABLED=0 go build -tags mpirt -o build/bench-collectives ./scripts/bench/collectives
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
. scripts/bench/run.sh
run() { bench_run "$1" '^  collectives ' '^  ' "${@:2}"; }
for n in 2 4; do
	run "Open MPI, $n ranks" timeout 600 mpirun --oversubscribe -n "$n" -x MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" build/bench-collectives "$@"
done
if [ "${MPICH:-1}" != 0 ] && [ -n "${HATAORI_WRAPPER_MPICH:-}" ]; then
	for n in 2 4; do
		run "MPICH, $n ranks" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" timeout 600 mpiexec.mpich -n "$n" build/bench-collectives "$@"
	done
fi
bench_summary
