#!/usr/bin/env bash
# The one command that checks everything on a fresh Debian machine:
# installs what is missing (scripts/setup.sh), then runs gofmt, go vet and
# staticcheck for every build (default, mpirt, mpicgo), the race-enabled
# test suite of every package in the default build, builds our MPIABI
# wrappers against Open MPI and MPICH, runs every test again with the
# run-time backend (mpirt) under both MPIs and with the cgo backend (mpicgo)
# linked against each MPI, multi-rank tests included, and finally checks the
# build boundaries (no C toolchain for mpirt, no MPI in the default build,
# conflicting tags rejected).
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

step "go test -race, run-time backend (mpirt) under Open MPI and MPICH"
go test -race -shuffle=on -count=1 -tags mpirt,hataoridebug ./...

step "go test -race, cgo backend (mpicgo) linked against Open MPI"
CC=mpicc go test -race -shuffle=on -count=1 -tags mpicgo,hataoridebug ./...

if [ "${HATAORI_TEST_QUICK:-0}" != 1 ]; then
	step "go test, cgo backend (mpicgo) linked against MPICH"
	CC=mpicc.mpich go test -race -shuffle=on -count=1 -tags mpicgo,hataoridebug ./...
fi

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

echo
echo "scripts/test.sh: all checks passed in $(( $(date +%s) - started )) s"
