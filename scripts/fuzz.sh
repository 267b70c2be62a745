#!/usr/bin/env bash
# fuzz.sh: run every fuzz target of the module (each func FuzzX in a
# *_test.go file) for a bounded time, one `go test -fuzz` run per target,
# and exit non-zero when any of them finds a failing input.
#
# Environment: HATAORI_FUZZTIME is the -fuzztime of each target (default
# 10s; a count such as 1000000x runs that many inputs instead).
#
# The targets build with -tags mpirt: the payload codec they fuzz
# (hataori/internal/wire) exists only in builds with an MPI backend. A run
# that fuzzed nothing (a target missing from that build passes silently,
# without the "fuzz: elapsed" lines) fails.
#
# A failing input is written by Go to the package's testdata/fuzz/FuzzX/
# directory: fix the bug and commit the input as a regression test. The
# corpus Go grows while fuzzing lives in the build cache ($(go env
# GOCACHE)/fuzz), never in the repository.
#
# Go 1.26's fuzzing coordinator sometimes reports the end of a
# duration-based -fuzztime as a failure, "context deadline exceeded", with
# no failing input (go.dev/issue/75804, fixed in Go 1.27). A run that fails
# that way without writing an input is reported as that flake, not as a
# failure; any other failure, or any new input under testdata/fuzz, fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
fuzztime="${HATAORI_FUZZTIME:-10s}"

started=$(date +%s)
failed=()
flaked=()
ran=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# inputs lists the failing inputs saved for target in dir.
inputs() { ls "$1/testdata/fuzz/$2" 2>/dev/null || true; }
# Every directory with a fuzz target (tracked or new test files, not
# ignored ones), then its targets, in a stable order.
for dir in $(git ls-files -co --exclude-standard -- '*_test.go' | xargs grep -l -E '^func Fuzz[A-Za-z0-9_]*\(' | xargs -n1 dirname | sort -u); do
	for target in $(grep -h -o -E '^func Fuzz[A-Za-z0-9_]*\(' "$dir"/*_test.go | sed -e 's/^func //' -e 's/($//' | sort -u); do
		printf '== fuzz %s %s (%s)\n' "./$dir" "$target" "$fuzztime"
		ran=$((ran + 1))
		before=$(inputs "$dir" "$target")
		status=0
		go test -tags mpirt -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 10s "./$dir" 2>&1 | tee "$log" || status=$?
		if [ "$status" -eq 0 ] && ! grep -q '^fuzz: elapsed' "$log"; then
			echo "fuzz.sh: $target: nothing fuzzed (is it in the -tags mpirt build?)" >&2
			status=1
		fi
		if [ "$status" -ne 0 ]; then
			if [ "$(inputs "$dir" "$target")" = "$before" ] && grep -qx '[[:space:]]*context deadline exceeded' "$log" &&
				[ "$(grep -c -e '^--- FAIL' -e '^[[:space:]]*--- FAIL' "$log")" -eq 1 ]; then
				echo "fuzz.sh: $target: the Go fuzzing coordinator's deadline race (go.dev/issue/75804), no failing input: not a failure"
				flaked+=("./$dir $target")
			else
				failed+=("./$dir $target")
			fi
		fi
	done
done

elapsed=$(($(date +%s) - started))
if [ "$ran" -eq 0 ]; then
	echo "fuzz.sh: no fuzz targets found" >&2
	exit 1
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz.sh: ${#failed[@]} of $ran targets failed in ${elapsed} s:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	echo "the failing inputs are under each package's testdata/fuzz/ (rerun with go test -run=FuzzX/<name>)" >&2
	exit 1
fi
echo "fuzz.sh: $ran targets passed ($fuzztime each) in ${elapsed} s${flaked:+; ${#flaked[@]} hit the deadline race: ${flaked[*]}}"
