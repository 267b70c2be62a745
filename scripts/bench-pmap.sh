#!/usr/bin/env bash
# bench-pmap.sh: hataori.Pmap benchmarks under real mpirun, each figure
# printed next to a baseline measured in the same run
# (hataori/internal/benchpmap):
#   skew      64 heavy-tailed sleep items on 4 ranks: makespan against the
#             ideal bound, a zero-overhead greedy schedule and a static split
#   overhead  20,000 trivial items, batch 1 and 64, 2 and 4 ranks: items/s
#             and µs/item next to the MPI ping-pong round trip
#   payload   1 MiB []float64 results on 2 ranks, batch 1. Baseline "raw":
#             rank 1 allocates a fresh 1 MiB []float64, writes every element
#             and MPI_Sends it; rank 0 receives it into a fresh []float64 and
#             keeps it (as Pmap's result table does). Pmap computes the same
#             results in its callback; the root's own lane is held back until
#             the expected end of the remote work (estimated from the
#             previous call, never a fixed sleep), so nearly every result
#             crosses ranks. Printed per round (raw and Pmap alternate):
#             the effective figure (results that crossed / whole call time:
#             scheduling, encode, transfer and decode included) and the
#             remote lane's steady-state time per result (measured on rank 1),
#             each as a fraction of raw; then the medians. The "transport
#             ceiling" line (one buffer re-sent, no allocation) shows what
#             MPI alone moves; it is not the ratio's baseline, since no
#             result path can skip producing and storing the results.
#
# Usage: scripts/bench-pmap.sh [openmpi|mpich]   (default openmpi)
# Uses the run-time backend (-tags mpirt) and the MPIABI wrappers built by
# scripts/build-wrappers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
mpi="${1:-openmpi}"
eval "$(scripts/build-wrappers.sh)"
bin="$(mktemp -d)/benchpmap"
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -tags mpirt -o "$bin" ./hataori/internal/benchpmap

run() { # run RANKS CASE
	case "$mpi" in
	openmpi)
		OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
			mpirun --oversubscribe --bind-to none -n "$1" env MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" "$bin" -case "$2" ;;
	mpich)
		UCX_HANDLE_ERRORS=none timeout 300 \
			mpiexec.mpich -n "$1" env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" "$bin" -case "$2" ;;
	*) echo "unknown MPI $mpi (openmpi or mpich)" >&2; exit 2 ;;
	esac
}

echo "== Pmap benchmarks ($mpi, $(nproc) CPUs, run-time backend)"
run 4 skew
run 2 overhead
run 4 overhead
run 2 payload
