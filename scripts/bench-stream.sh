#!/usr/bin/env bash
# bench-stream.sh: hataori.PmapStream against hataori.Pmap on the same
# 20,000,000 trivial items (x+1) on 2 ranks, zero Options{} (automatic
# batches, the default window), MPI-only (nil domain) and hybrid
# (NewLocalDomain), under the launcher's default binding. One call per
# launch (scripts/bench/stream), so that the root's peak RSS (ru_maxrss) is
# that call's: the stream generates its items lazily and sums the results
# in its sink, Pmap holds the input slice and the result table. Stream and
# Pmap launches alternate, ROUNDS pairs per configuration; printed: every
# launch's RESULT line (ns/item, root peak RSS, items per rank, batch sizes
# per rank and slot as {batches min median max}), then per configuration
# the medians, their ratio stream/Pmap (aim <= 1.5) and the stream's
# largest peak RSS (aim <= 64 MB).
#
# Usage: scripts/bench-stream.sh [openmpi|mpich] [ROUNDS] [ITEMS]
#   (defaults: openmpi, 5 rounds, 20000000 items). About 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
mpi="${1:-openmpi}"
rounds="${2:-5}"
n="${3:-20000000}"
eval "$(scripts/build-wrappers.sh)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_HANDLE_ERRORS=none
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go build -tags mpirt -o "$tmp/stream" ./scripts/bench/stream
case "$mpi" in
openmpi) launch() { MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI timeout 300 mpirun -n 2 "$@"; } ;;
mpich) launch() { MPI_RT_LIB=$HATAORI_WRAPPER_MPICH timeout 300 mpiexec.mpich -n 2 "$@"; } ;;
*) echo "unknown MPI $mpi (openmpi or mpich)" >&2; exit 2 ;;
esac
echo "PmapStream vs Pmap, $n trivial items, 2 ranks, $mpi, default binding, $rounds rounds"
for config in mpi-only hybrid; do
	: > "$tmp/$config"
	for r in $(seq "$rounds"); do
		for call in stream pmap; do
			launch "$tmp/stream" -call "$call" -n "$n" -config "$config" -window "${WINDOW:-0}" | grep '^RESULT' | tee -a "$tmp/$config"
		done
	done
	awk -v config="$config" '
		function val(line, key,   i, kv) { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return kv[2] } }
		function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		{ c = val($0, "call"); ns = val($0, "ns_per_item") + 0; rss = val($0, "rss_mb") + 0
		  if (c == "stream") { s[++ns_s] = ns; if (rss > maxrss) maxrss = rss } else { p[++ns_p] = ns; if (rss > prss) prss = rss } }
		END { ms = median(s, ns_s); mp = median(p, ns_p)
		      printf "%s: stream %.1f ns/item, Pmap %.1f ns/item (medians of %d), stream/Pmap %.2f (aim <= 1.5); root peak RSS: stream %.1f MB (aim <= 64), Pmap %.1f MB\n", config, ms, mp, ns_s, ms / mp, maxrss, prss }' "$tmp/$config"
done
