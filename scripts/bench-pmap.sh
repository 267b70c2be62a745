#!/usr/bin/env bash
# bench-pmap.sh: hataori.Pmap benchmarks under real mpirun, each figure
# printed next to a baseline measured in the same run
# (hataori/internal/benchpmap):
#   skew      64 heavy-tailed sleep items on 4 ranks: makespan against the
#             ideal bound, a zero-overhead greedy schedule and a static split
#   overhead  20,000 trivial items, batch 1 and 64, 2 and 4 ranks: items/s
#             and µs/item next to the MPI ping-pong round trip
#   payload   1 MiB []float64 results on 2 ranks: effective bandwidth
#             against a raw MPI send of the same bytes
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
