#!/usr/bin/env bash
# bench-lanes.sh: MapInLanes with 2 lanes against a plain loop over one
# engine, on the lanes-gonum workload (eigenvalues of AᵀA, 96×96, 32 items
# per iteration). Both are timed in the same benchmark run, alternating, and
# the ratio loop/lanes is reported as "speedup".
#
# Usage: scripts/bench-lanes.sh [benchtime]   (default 30x)
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime="${1:-30x}"
out="$(go test -run '^$' -bench '^BenchmarkMapInLanesGonum$' -benchtime "$benchtime" -count 1 ./lanes/)"
echo "$out"
echo "$out" | awk '/^BenchmarkMapInLanesGonum/ {
	for (i = 1; i < NF; i++) {
		if ($(i+1) == "loop-ns/item")   loop = $i
		if ($(i+1) == "lanes2-ns/item") lanes = $i
		if ($(i+1) == "speedup")        sp = $i
	}
	printf "lanes-gonum: plain loop %.3f ms/item, MapInLanes(2 lanes) %.3f ms/item, speed-up %.2fx (GOMAXPROCS=%s, %s CPUs)\n",
		loop / 1e6, lanes / 1e6, sp, ENVIRON["GOMAXPROCS"] == "" ? "default" : ENVIRON["GOMAXPROCS"], cpus
}' cpus="$(nproc)"
