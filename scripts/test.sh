#!/usr/bin/env bash
# The one command that checks everything on a fresh Debian machine:
# installs what is missing (scripts/setup.sh), then runs gofmt, go vet and
# staticcheck for every build (default, mpirt, mpicgo), the race-enabled
# test suite of every package in the default build, builds our MPIABI
# wrappers against Open MPI and MPICH, runs every test again with the
# run-time backend (mpirt) under both MPIs and with the cgo backend (mpicgo)
# linked against each MPI, multi-rank tests included, and finally checks the
# build boundaries (no C toolchain for mpirt, no MPI in the default build,
# conflicting tags rejected), runs the examples, and last runs the
# multi-host suite across two network-namespace hosts (scripts/multihost.sh,
# as root).
#
# Environment: HATAORI_TEST_QUICK=1 skips the cgo MPICH pass (for local
# iteration only; CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/setup.sh
export PATH="/usr/local/go/bin:$(go env GOPATH)/bin:$PATH"

step() { printf '\n== %s\n' "$*"; }
started=$(date +%s)

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

step "go vet and staticcheck (default, mpirt, mpicgo)"
go vet ./...
staticcheck ./...
go vet -tags mpirt ./...
staticcheck -tags mpirt ./...
CC=mpicc go vet -tags mpicgo ./...
CC=mpicc staticcheck -tags mpicgo ./...

step "build the MPIABI wrappers (Open MPI, MPICH)"
eval "$(scripts/build-wrappers.sh)"
export HATAORI_WRAPPER_OPENMPI HATAORI_WRAPPER_MPICH

# From here on a missing MPI fails the multi-rank tests instead of skipping them.
export HATAORI_REQUIRE_MPI=1

step "go test -race, default build (no MPI backend)"
go test -race -shuffle=on -count=1 ./...

step "go test without -race (the allocation tests skip under -race), darwin vet and test builds"
go test -count=1 -run 'Alloc' ./mpiabi/
# The payload codec (and so its tests) exists only with an MPI backend.
go test -count=1 -tags mpirt -run 'Alloc' ./hataori/internal/wire/ ./mpiabi/
GOOS=darwin go vet ./...
GOOS=darwin go vet -tags mpirt ./...
for pkg in $(go list ./...); do
	GOOS=darwin go test -c -o /dev/null "$pkg" >/dev/null
	GOOS=darwin go test -c -tags mpirt -o /dev/null "$pkg" >/dev/null
done

step "go test -race, run-time backend (mpirt) under Open MPI and MPICH"
go test -race -shuffle=on -count=1 -timeout 30m -tags mpirt,hataoridebug ./...

step "go test -race, cgo backend (mpicgo) linked against Open MPI"
CC=mpicc go test -race -shuffle=on -count=1 -timeout 30m -tags mpicgo,hataoridebug ./...

if [ "${HATAORI_TEST_QUICK:-0}" != 1 ]; then
	step "go test, cgo backend (mpicgo) linked against MPICH"
	CC=mpicc.mpich go test -race -shuffle=on -count=1 -timeout 30m -tags mpicgo,hataoridebug ./...
fi

step "fuzz every decoder (scripts/fuzz.sh)"
scripts/fuzz.sh

step "build boundaries"
scripts/check-builds.sh

step "examples run (local, then under mpirun through the run-time backend)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./examples/mandelbrot -o "$tmp/local.png"
go run ./examples/lanes-gonum -items 16 -runs 1
CGO_ENABLED=0 go build -tags mpirt -o "$tmp/mandelbrot" ./examples/mandelbrot
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI timeout 120 mpirun --oversubscribe -n 2 "$tmp/mandelbrot" -mpi -o "$tmp/openmpi.png"
MPI_RT_LIB=$HATAORI_WRAPPER_MPICH UCX_HANDLE_ERRORS=none timeout 120 mpiexec.mpich -n 4 "$tmp/mandelbrot" -mpi -o "$tmp/mpich.png"
cmp "$tmp/local.png" "$tmp/openmpi.png"
cmp "$tmp/local.png" "$tmp/mpich.png"
echo "the MPI renders are byte-identical to the local one"

# The sweep-progress example and the timeline script, each launcher run
# bounded by timeout (the timeline script bounds its own).
step "examples run: sweep-progress (progress bar, CollectAll, statistics) and the timeline script"
CGO_ENABLED=0 go build -tags mpirt -o "$tmp/sweep" ./examples/sweep-progress
MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI timeout 120 mpirun --oversubscribe -n 4 "$tmp/sweep" -points 100 -scale 5
MPI_RT_LIB=$HATAORI_WRAPPER_MPICH UCX_HANDLE_ERRORS=none timeout 120 mpiexec.mpich -n 2 "$tmp/sweep" -points 100 -scale 5 -bar=false
scripts/timeline.sh "$tmp/timeline.png" openmpi -json "$tmp/spans.json" -total 500ms
timeout 120 go run ./scripts/timeline -in "$tmp/spans.json" -o "$tmp/timeline-redrawn.png"
test -s "$tmp/timeline.png" && test -s "$tmp/timeline-redrawn.png"

# ---- new example programs: sweep-csv, scatter-gather, mpi4py --------------
# Each runs locally (no MPI) and under Open MPI's mpirun through the run-time
# backend, and its output is compared with the local run or a known value.
step "new examples: quickstart, sweep-csv, scatter-gather, mpi4py (local, then under mpirun)"
ex="$tmp/new-examples"
mkdir -p "$ex"
ompi() { MPI_RT_LIB=$HATAORI_WRAPPER_OPENMPI timeout 120 mpirun --oversubscribe "$@"; }

# quickstart: the README's program (its test checks the README shows it byte
# for byte); the same sum locally and on 2 ranks under each MPI.
want='sum of squares of 1..1000: 333833500'
go run ./examples/quickstart | tee "$ex/qs-local.txt"
CGO_ENABLED=0 go build -tags mpirt -o "$ex/quickstart" ./examples/quickstart
ompi -n 2 "$ex/quickstart" | tee "$ex/qs-openmpi.txt"
MPI_RT_LIB=$HATAORI_WRAPPER_MPICH UCX_HANDLE_ERRORS=none timeout 120 mpiexec.mpich -n 2 "$ex/quickstart" | tee "$ex/qs-mpich.txt"
grep -qF "$want (no MPI: " "$ex/qs-local.txt"
for f in "$ex/qs-openmpi.txt" "$ex/qs-mpich.txt"; do
	[ "$(wc -l < "$f")" -eq 1 ] # only the root prints
	grep -qF "$want (items per rank and slot [[" "$f"
done
echo "quickstart: the same sum locally and on 2 ranks under Open MPI and MPICH"

# sweep-csv: the root's CSV of a 4-rank Pmap equals the local MapIn one
# byte for byte; past r = 4 every rank fails with the same error.
go build -o "$ex/sweep-local" ./examples/sweep-csv
CGO_ENABLED=0 go build -tags mpirt -o "$ex/sweep-mpi" ./examples/sweep-csv
"$ex/sweep-local" -o "$ex/sweep-local.csv" | tee "$ex/sweep-local.txt"
ompi -n 4 "$ex/sweep-mpi" -o "$ex/sweep-mpi.csv" | tee "$ex/sweep-mpi.txt"
cmp "$ex/sweep-local.csv" "$ex/sweep-mpi.csv"
[ "$(head -1 "$ex/sweep-mpi.csv")" = "r,lyapunov,period" ]
[ "$(wc -l < "$ex/sweep-mpi.csv")" -eq 242 ]
grep -q "241 values of r, 80 chaotic" "$ex/sweep-local.txt"
grep -q "241 values of r, 80 chaotic" "$ex/sweep-mpi.txt"
rc=0; ompi -n 4 "$ex/sweep-mpi" -rmax 4.2 -o "$ex/sweep-bad.csv" 2> "$ex/sweep-bad.txt" || rc=$?
want='r=4.001667: the orbit left \[0, 1\] at step 24'
if [ "$rc" -ne 1 ] || [ -e "$ex/sweep-bad.csv" ] ||
	[ "$(grep -c "sweep failed: user error reported by rank [0-3]: $want\$" "$ex/sweep-bad.txt")" -ne 4 ] ||
	[ "$(grep -o 'sweep failed: .*' "$ex/sweep-bad.txt" | sort -u | wc -l)" -ne 1 ]; then
	cat "$ex/sweep-bad.txt"; echo "sweep-csv -rmax 4.2: want exit status 1 and one identical error on each of 4 ranks (got $rc)"; exit 1
fi
rc=0; "$ex/sweep-local" -rmax 4.2 -o "$ex/sweep-bad.csv" 2> "$ex/sweep-bad-local.txt" || rc=$?
[ "$rc" -eq 1 ]
grep -q "sweep failed at item 206: $want" "$ex/sweep-bad-local.txt"
echo "sweep-csv: the MPI CSV is byte-identical to the local one; past r = 4 all 4 ranks report the same error"

# scatter-gather: the same known checksum locally and on 4 ranks.
want='collatz 1..100000: 10753840 steps, longest 350 (from 77031), fnv-1a 0x28955459eb5bf4dd'
go run ./examples/scatter-gather | tee "$ex/sg-local.txt"
CGO_ENABLED=0 go build -tags mpirt -o "$ex/scatter-gather" ./examples/scatter-gather
ompi -n 4 "$ex/scatter-gather" | tee "$ex/sg-mpi.txt"
grep -qxF "$want" "$ex/sg-local.txt"
grep -qxF "$want" "$ex/sg-mpi.txt"
grep -qxF "scatter-gather: 4 ranks, shards of [25000 25000 25000 25000] numbers" "$ex/sg-mpi.txt"
echo "scatter-gather: local and 4-rank checksums equal the known value"

# mpi4py: Python (Debian's mpi4py, built on Open MPI) calls the Go c-shared
# library's Pmap on 2 ranks and prints the counts it got back.
python=""
for p in ${HATAORI_PYTHON:-} python3 /usr/bin/python3; do
	if "$p" -c 'import mpi4py' 2> /dev/null; then python=$(command -v "$p"); break; fi
done
[ -n "$python" ] || { echo "no python3 with mpi4py: apt-get install python3-mpi4py"; exit 1; }
CGO_ENABLED=1 go build -buildmode=c-shared -tags mpirt -o "$ex/libprimes.so" ./examples/mpi4py
PYTHONDONTWRITEBYTECODE=1 ompi -n 2 "$python" examples/mpi4py/primes.py "$ex/libprimes.so" | tee "$ex/primes.txt"
diff -u - "$ex/primes.txt" <<'OUT'
primes below 10: 4
primes below 100: 25
primes below 1000: 168
primes below 10000: 1229
primes below 100000: 9592
primes below 1000000: 78498
primes below 10000000: 664579
7 counts from Pmap on 2 ranks: as expected
error on every rank: primes below -5: the limit must not be negative
OUT
echo "mpi4py: Python got Pmap's results and the same error on every rank"
# ---- end of the new example programs -------------------------------------

step "multi-host suite (network namespaces)"
# Needs root and ip; fails loudly without them (never skips).
scripts/multihost.sh

echo
echo "scripts/test.sh: all checks passed in $(( $(date +%s) - started )) s"
