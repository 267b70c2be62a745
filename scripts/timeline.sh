#!/usr/bin/env bash
# timeline.sh: run a skewed Pmap sweep on 4 ranks under real mpirun and draw
# its timeline (one row per rank and slot, one bar per batch, from
# hataori.CallStats with RecordSpans) as a PNG, with scripts/timeline
# (gonum.org/v1/plot; a separate main package, so the plotting library
# stays out of hataori's and lanes' dependency tree).
#
# Usage: scripts/timeline.sh [OUT.png] [openmpi|mpich] [timeline flags...]
#   (defaults: docs/timeline.png, openmpi; e.g. -mode mpi-only -batch 2)
# Uses the run-time backend (-tags mpirt) and the MPIABI wrappers built by
# scripts/build-wrappers.sh. The launcher run is bounded by timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/timeline.png}"
mpi="${2:-openmpi}"
shift $(( $# > 2 ? 2 : $# ))
eval "$(scripts/build-wrappers.sh)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -tags mpirt -o "$tmp/timeline" ./scripts/timeline
case "$mpi" in
openmpi)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 \
		mpirun --oversubscribe -n 4 env MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI" \
		"$tmp/timeline" -o "$out" "$@" ;;
mpich)
	UCX_HANDLE_ERRORS=none timeout 120 \
		mpiexec.mpich -n 4 env MPI_RT_LIB="$HATAORI_WRAPPER_MPICH" \
		"$tmp/timeline" -o "$out" "$@" ;;
*) echo "unknown MPI $mpi (openmpi or mpich)" >&2; exit 2 ;;
esac
