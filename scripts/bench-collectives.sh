#!/usr/bin/env bash
# bench-collectives.sh: bandwidth of Broadcast and Gather ([]float64 and
# []byte, 1 MiB and 64 MiB) against raw MPI (MPI_Bcast, Send/Recv) measured
# in the same run, plus the one-message vs two-message frame layout, on 2 and
# 4 ranks, under Open MPI and (unless MPICH=0) MPICH, with the run-time
# backend (BACKEND=mpicgo uses the cgo backend against Open MPI instead).
#
# Usage: scripts/bench-collectives.sh [extra benchplace flags, e.g. -reps 10]
set -euo pipefail
cd "$(dirname "$0")/.."
backend="${BACKEND:-mpirt}"
mkdir -p build
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_HANDLE_ERRORS=none
if [ "$backend" = mpicgo ]; then
	CC=mpicc go build -tags mpicgo -o build/benchplace ./hataori/internal/benchplace
	for n in 2 4; do
		timeout 600 mpirun --oversubscribe -n "$n" build/benchplace "$@"
	done
	exit 0
fi
eval "$(scripts/build-wrappers.sh)"
CGO_ENABLED=0 go build -tags mpirt -o build/benchplace ./hataori/internal/benchplace
for n in 2 4; do
	echo "=== Open MPI, $n ranks"
	timeout 600 mpirun --oversubscribe -n "$n" -x MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" build/benchplace "$@"
done
if [ "${MPICH:-1}" != 0 ] && [ -n "${HATAORI_WRAPPER_MPICH:-}" ]; then
	for n in 2 4; do
		echo "=== MPICH, $n ranks"
		MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" timeout 600 mpiexec.mpich -n "$n" build/benchplace "$@"
	done
fi
