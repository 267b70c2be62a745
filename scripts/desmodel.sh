#!/usr/bin/env bash
# desmodel.sh: run the discrete-event model of the root's dealing
# (scripts/desmodel: the real internal/sched on a modelled clock, the
# per-message costs measured here) and draw its saturation scan.
#
# Usage: scripts/desmodel.sh [OUT.png] [desmodel flags...]
#   (default docs/img/desmodel.png; e.g. -full for 1, 4, 16, 64, 256 ranks,
#   -rounds 16 for longer calls). No MPI needed.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/img/desmodel.png}"
shift $(( $# > 0 ? 1 : 0 ))
exec go run ./scripts/desmodel -png "$out" "$@"
