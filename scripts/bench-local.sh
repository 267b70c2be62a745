#!/bin/sh
# bench-local.sh: MapIn Outer against a hand-written sync.WaitGroup +
# atomic-index loop over as many goroutines, for a trivial callback and a
# ~50 µs CPU-bound one (plus serial Map for the speed-up), all measured in
# the same run, interleaved round by round (medians of the rounds).
#
#   scripts/bench-local.sh            # 3 runs of 2 s each
#   COUNT=5 BENCHTIME=5s scripts/bench-local.sh
#
# Aims: mapin/hand <= 1.2 (per-item overhead), speedup >= 1.8 on 2 cores
# for the CPU-bound case. Other processes on the machine skew both.
set -eu
cd "$(dirname "$0")/.."
COUNT=${COUNT:-3}
BENCHTIME=${BENCHTIME:-2s}
out=$(go test -run '^$' -bench '^BenchmarkLocalOuter$' -benchtime "$BENCHTIME" -count "$COUNT" ./hataori/)
echo "$out" | grep -E '^(goos|goarch|cpu|Benchmark)'
echo
echo "$out" | awk '
/^BenchmarkLocalOuter\// {
	name = $1; sub(/^BenchmarkLocalOuter\//, "", name); sub(/-[0-9]+$/, "", name)
	line = sprintf("%-8s", name)
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "mapin-ns/item") line = line sprintf("  MapIn %8.1f ns/item", $i)
		if ($(i+1) == "hand-ns/item") line = line sprintf("  hand %8.1f ns/item", $i)
		if ($(i+1) == "mapin/hand") line = line sprintf("  ratio %.3f", $i)
		if ($(i+1) == "speedup") line = line sprintf("  speed-up vs serial %.2fx", $i)
		if ($(i+1) == "workers") w = $i
	}
	print line
}
END { printf("(%d workers; ratio = MapIn/hand, aim <= 1.2; speed-up aim >= 1.8 on 2 cores)\n", w) }'
