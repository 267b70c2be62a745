#!/usr/bin/env bash
# bench-bulk.sh: bulk results (issue 22, items 3 and 4) under real mpirun,
# every ratio within one run, launches interleaved, medians over ROUNDS,
# items per rank printed (scripts/bench/bulk, run-time backend):
#   rss      3,000 results of 1 MiB []float64 through PmapStream on 2
#            ranks, Window 32, with and without ReuseBuffers (one launch
#            each per round: Maxrss is a process's peak): the root's peak
#            RSS (getrusage). Aim: <= 256 MB both.
#   remote   the remote rank's result path for 1 MiB results (its callback
#            returns a prepared result; the root's slot sleeps, leaving its
#            core to the coordinator): PmapStream with ReuseBuffers, without,
#            and Pmap, as a bandwidth, against the C ping-pong's 1 MiB
#            bandwidth (scripts/bench/pingpong.c, the MPI's own compiler),
#            C and Go launches alternating. Aim: ReuseBuffers >= 0.5 of C.
#   scale    1,000 results of 512 KiB (fresh, filled by the callback), zero
#            Options, on 1 and 2 ranks, and on 2 with HATAORI_SENDER_COPY=0
#            (every result through MPI; alternating launches). Aim: 2 ranks
#            faster than 1.
#   payload  Pmap's remote 1 MiB results against raw MPI into fresh memory
#            (scripts/bench-pmap.sh's payload case: its own 7 interleaved
#            rounds, raw and Pmap alternating). Aim: >= 0.85 of raw.
# Usage: scripts/bench-bulk.sh [ROUNDS] (default 5). Environment:
# BENCH_MPIS (default "openmpi mpich"), BENCH_CASES (default "rss remote
# scale payload"), BENCH_TIMEOUT (seconds per launch, default 240).
# About 4 minutes per MPI at 5 rounds on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-5}"
mpis="${BENCH_MPIS:-openmpi mpich}"
cases="${BENCH_CASES:-rss remote scale payload}"
tmo="${BENCH_TIMEOUT:-240}"
eval "$(scripts/build-wrappers.sh)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 UCX_HANDLE_ERRORS=none
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -tags mpirt -o "$tmp/bulk" ./scripts/bench/bulk
CGO_ENABLED=0 go build -tags mpirt -o "$tmp/pmap" ./scripts/bench/pmap

# med FILE: the median of the numbers in FILE, one a line.
med() { sort -g "$1" | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# field NAME: the value of NAME=… on stdin's lines.
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print substr($i, length(k) + 2) } }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "nan"; else printf "%.2f", a / b }'; }
has() { [[ " $cases " == *" $1 "* ]]; }

for m in $mpis; do
	case "$m" in
	openmpi) cc=mpicc; lib="$HATAORI_WRAPPER_OPENMPI"; launch() { local n="$1"; shift; timeout "$tmo" mpirun --oversubscribe -n "$n" env MPI_RT_LIB="$lib" "$@"; } ;;
	mpich) cc=mpicc.mpich; lib="$HATAORI_WRAPPER_MPICH"; launch() { local n="$1"; shift; timeout "$tmo" mpiexec.mpich -n "$n" env MPI_RT_LIB="$lib" "$@"; } ;;
	*) echo "bench-bulk: unknown MPI $m" >&2; exit 2 ;;
	esac
	"$cc" -O2 -o "$tmp/pingpong-$m" scripts/bench/pingpong.c
	d="$tmp/$m"
	mkdir -p "$d"
	echo "== $m, $rounds rounds; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	for ((r = 1; r <= rounds; r++)); do
		if has remote; then
			launch 2 "$tmp/pingpong-$m" 3 1 | awk '$1 == "RESULT" && $2 == "size=1048576"' | field mbps >>"$d/c"
			launch 2 "$tmp/bulk" -case remote -rounds 3 >"$d/out"
			for v in stream-reuse stream-fresh pmap; do grep "variant=$v " "$d/out" | field mbps >>"$d/remote-$v"; done
			echo "  round $r remote: C $(tail -1 "$d/c") MB/s; $(awk '{ printf "%s %s  ", $2, $3 }' "$d/out")$(grep -o 'items=.*' "$d/out" | head -1)"
		fi
		if has scale; then
			for v in 1 2 2-mpi; do
				n="${v%%-*}"
				launch "$n" env HATAORI_SENDER_COPY="$([ "$v" = 2-mpi ] && echo 0 || echo 1)" "$tmp/bulk" -case scale -rounds 3 >"$d/out"
				field ms <"$d/out" >>"$d/scale-$v"
				echo "  round $r scale $v: $(cat "$d/out")"
			done
		fi
		if has rss; then
			for reuse in true false; do
				launch 2 "$tmp/bulk" -case rss -reuse="$reuse" >"$d/out"
				field maxrss_mb <"$d/out" >>"$d/rss-$reuse"
				echo "  round $r rss: $(cat "$d/out")"
			done
		fi
	done
	if has payload; then
		launch 2 "$tmp/pmap" -case payload >"$d/payload" || echo "  payload FAILED"
		grep -E '^  (round|payload)' "$d/payload" | grep -E 'payload|raw' | sed 's/^/  /' || true
	fi
	echo "== $m summary (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
	if has remote; then
		c="$(med "$d/c")"
		for v in stream-reuse stream-fresh pmap; do
			printf '  remote %-12s %6.0f MB/s = %s of the C ping-pong (%s MB/s)%s\n' "$v" "$(med "$d/remote-$v")" "$(ratio "$(med "$d/remote-$v")" "$c")" "$c" \
				"$([ "$v" = stream-reuse ] && echo ' (aim >= 0.5)')"
		done
	fi
	if has scale; then
		printf '  scale 1,000 x 512 KiB: 1 rank %s ms, 2 ranks %s ms: 2/1 = %s (aim < 1); 2 ranks without sender-side placement %s ms: %s\n' \
			"$(med "$d/scale-1")" "$(med "$d/scale-2")" "$(ratio "$(med "$d/scale-2")" "$(med "$d/scale-1")")" \
			"$(med "$d/scale-2-mpi")" "$(ratio "$(med "$d/scale-2-mpi")" "$(med "$d/scale-1")")"
	fi
	if has rss; then
		printf '  rss 3,000 x 1 MiB, Window 32: ReuseBuffers %s MB, without %s MB (aim <= 256)\n' "$(med "$d/rss-true")" "$(med "$d/rss-false")"
	fi
	if has payload; then
		grep -E '^  payload ' "$d/payload" | sed 's/^  /  Pmap vs raw: /' || true
	fi
done
