#!/usr/bin/env bash
# bench-pingpong.sh: ping-pong latency (8 B, 1 KiB round trips) and
# bandwidth (1 MiB) between 2 ranks, for
#   C     scripts/bench/pingpong.c built with the MPI's own compiler,
#   cgo   scripts/bench/pingpong (hataori.Comm Send/Recv) built with -tags mpicgo (CC=that compiler),
#   rt    the same program built with -tags mpirt and CGO_ENABLED=0, loading
#         the MPIABI wrapper of that MPI (scripts/build-wrappers.sh),
# under Open MPI and (unless BENCH_MPIS says otherwise) MPICH. The three
# programs of one MPI run interleaved ROUNDS times (default 3) and the best
# figure of each is kept, so that load from other processes hurts all three
# alike. Prints a table with the ratios rt/cgo and rt/C.
#
# Environment: ROUNDS (default 3), REPS (repetitions inside a run, default 5),
# SCALE (iteration multiplier, default 1), BENCH_MPIS (default "openmpi mpich").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rounds="${ROUNDS:-3}"
reps="${REPS:-5}"
scale="${SCALE:-1}"
mpis="${BENCH_MPIS:-openmpi mpich}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

eval "$(scripts/build-wrappers.sh)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 UCX_HANDLE_ERRORS=none

echo "building rt (CGO_ENABLED=0 -tags mpirt)" >&2
CGO_ENABLED=0 go build -tags mpirt -o "$tmp/rt" ./scripts/bench/pingpong

# best FILE SIZE FIELD: the best value of FIELD (rtt_us: lowest, mbps:
# highest) for SIZE over the RESULT lines of FILE.
best() {
  awk -v size="$2" -v field="$3" '
    $1 == "RESULT" {
      v = ""; s = ""
      for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "size") s = kv[2]; if (kv[1] == field) v = kv[2] }
      if (s == size && v != "") {
        if (b == "" || (field == "mbps" && v + 0 > b + 0) || (field != "mbps" && v + 0 < b + 0)) b = v
      }
    }
    END { print (b == "" ? "nan" : b) }' "$1"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "nan"; else printf "%.2f", a / b }'; }

printf '\n%-8s %-4s %12s %12s %14s\n' "MPI" "prog" "8B rtt(us)" "1KiB rtt(us)" "1MiB (MB/s)"
for m in $mpis; do
  case "$m" in
    openmpi) cc=mpicc; run=(mpirun --oversubscribe -n 2); lib="${HATAORI_WRAPPER_OPENMPI:-}" ;;
    mpich) cc=mpicc.mpich; run=(mpiexec.mpich -n 2); lib="${HATAORI_WRAPPER_MPICH:-}" ;;
    *) echo "bench-pingpong: unknown MPI $m" >&2; exit 2 ;;
  esac
  if ! command -v "$cc" >/dev/null || ! command -v "${run[0]}" >/dev/null || [ -z "$lib" ]; then
    echo "bench-pingpong: $m not available (need $cc, ${run[0]} and its wrapper); skipping" >&2
    continue
  fi
  echo "building C and cgo with $cc" >&2
  "$cc" -O2 -o "$tmp/c-$m" scripts/bench/pingpong.c
  CC="$cc" go build -tags mpicgo -o "$tmp/cgo-$m" ./scripts/bench/pingpong
  : > "$tmp/C.$m"; : > "$tmp/cgo.$m"; : > "$tmp/rt.$m"
  for ((r = 1; r <= rounds; r++)); do
    echo "$m round $r/$rounds" >&2
    timeout 300 "${run[@]}" "$tmp/c-$m" "$reps" "$scale" >> "$tmp/C.$m"
    timeout 300 "${run[@]}" "$tmp/cgo-$m" -reps "$reps" -scale "$scale" >> "$tmp/cgo.$m"
    MPI_RT_LIB="$lib" timeout 300 "${run[@]}" "$tmp/rt" -reps "$reps" -scale "$scale" >> "$tmp/rt.$m"
  done
  for p in C cgo rt; do
    f="$tmp/$p.$m"
    printf '%-8s %-4s %12s %12s %14s\n' "$m" "$p" "$(best "$f" 8 rtt_us)" "$(best "$f" 1024 rtt_us)" "$(best "$f" 1048576 mbps)"
  done
  printf '%-8s ratios: rt/cgo 8B latency %s (aim <= 1.3), rt/cgo 1KiB latency %s, rt/C 1MiB bandwidth %s (aim >= 0.90)\n' "$m" \
    "$(ratio "$(best "$tmp/rt.$m" 8 rtt_us)" "$(best "$tmp/cgo.$m" 8 rtt_us)")" \
    "$(ratio "$(best "$tmp/rt.$m" 1024 rtt_us)" "$(best "$tmp/cgo.$m" 1024 rtt_us)")" \
    "$(ratio "$(best "$tmp/rt.$m" 1048576 mbps)" "$(best "$tmp/C.$m" 1048576 mbps)")"
done
