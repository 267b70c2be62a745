#!/usr/bin/env bash
# check-builds.sh: the build boundaries of the MPI backends.
#  (a) the run-time backend (-tags mpirt) builds with CGO_ENABLED=0, CC
#      pointing at a compiler that does not exist and no C include path, and
#      its binary does not link libmpi;
#  (b) the default build (no tag) contains no purego, no mpiabi and no MPI
#      symbols, and `go list -deps ./hataori ./lanes` (no tag,
#      CGO_ENABLED=0) names no serialization library (no
#      github.com/vmihailenco package: msgpack comes with a backend only);
#  (c) -tags mpirt,mpicgo fails to compile with the message naming the
#      conflict, and CGO_ENABLED=0 -tags mpicgo with one error naming the fix;
#  (d) the cgo backend (-tags mpicgo) builds with CC=mpicc (Open MPI) and
#      CC=mpicc.mpich (MPICH), and each binary links that MPI's library.
# Each check prints one line; the script stops at the first failure. A
# missing MPI compiler skips its (d) check unless HATAORI_REQUIRE_MPI=1.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

ok() { echo "check-builds: ok   $*"; }
fail() { echo "check-builds: FAIL $*" >&2; exit 1; }

# A tiny user program of the public API (local and MPI parts), built from a
# scratch module that points at this repository.
mkdir -p "$tmp/prog"
cat > "$tmp/prog/go.mod" <<MOD
module example.com/prog

go 1.26

require github.com/hataori/hataori-go v0.0.0
replace github.com/hataori/hataori-go => $root
MOD
cp go.sum "$tmp/prog/go.sum"
cat > "$tmp/prog/main.go" <<'GO'
package main

import (
	"fmt"
	"runtime"

	"github.com/hataori/hataori-go/hataori"
)

func init() { runtime.LockOSThread() }

func main() {
	v, ok := hataori.Some(3).Get()
	fmt.Println(v, ok, hataori.Backend())
	if w, err := hataori.World(); err == nil {
		fmt.Println(w.Size())
	}
}
GO
# prog_build OUT [go build flags...]: builds the scratch program.
prog_build() {
  local out="$1"; shift
  (cd "$tmp/prog" && GOFLAGS=-mod=mod go build "$@" -o "$out" .)
}

# (a) mpirt without any C toolchain or MPI header.
nocc=(env CGO_ENABLED=0 CC=/nonexistent/cc CXX=/nonexistent/c++ CPATH= C_INCLUDE_PATH= CPLUS_INCLUDE_PATH=)
"${nocc[@]}" go build -tags mpirt ./mpiabi/... ./hataori/... ||
  fail "(a) CGO_ENABLED=0 CC=/nonexistent/cc go build -tags mpirt ./mpiabi/... ./hataori/..."
"${nocc[@]}" go build -tags mpirt -o "$tmp/pingpong-rt" ./scripts/bench/pingpong ||
  fail "(a) CGO_ENABLED=0 build of scripts/bench/pingpong"
"${nocc[@]}" bash -c "$(declare -f prog_build); tmp='$tmp'; prog_build '$tmp/prog-rt' -tags mpirt" ||
  fail "(a) CGO_ENABLED=0 build of a user program with -tags mpirt"
for b in "$tmp/pingpong-rt" "$tmp/prog-rt"; do
  if go version -m "$b" | grep -q 'CGO_ENABLED=1'; then fail "(a) $b was built with cgo"; fi
  if readelf -d "$b" 2>/dev/null | grep -Eq 'NEEDED.*lib(mpi|mpich|open-pal)'; then fail "(a) $b links an MPI library"; fi
done
ok "(a) -tags mpirt builds with CGO_ENABLED=0, CC=/nonexistent/cc and no include path; no libmpi linked"

# (b) default build: no MPI code at all.
prog_build "$tmp/prog-default"
if go tool nm "$tmp/prog-default" | grep -Ei 'purego|mpiabi|MPI_' > "$tmp/nm.txt"; then
  head -5 "$tmp/nm.txt" >&2
  fail "(b) the default build contains purego/mpiabi/MPI symbols"
fi
[ "$(go tool nm "$tmp/prog-default" | grep -c 'hataori-go/hataori.World')" -gt 0 ] ||
  fail "(b) symbol check found no hataori symbol at all (is go tool nm working?)"
ok "(b) default build: no purego, mpiabi or MPI_ symbols"
CGO_ENABLED=0 go list -deps ./hataori ./lanes > "$tmp/deps.txt" || fail "(b) go list -deps ./hataori ./lanes"
grep -q '^github.com/hataori/hataori-go/hataori/internal/wire$' "$tmp/deps.txt" ||
  fail "(b) go list -deps ./hataori ./lanes does not list hataori/internal/wire (is the check looking at the right list?)"
if grep -E '^github\.com/vmihailenco/' "$tmp/deps.txt" > "$tmp/msgpack.txt"; then
  cat "$tmp/msgpack.txt" >&2
  fail "(b) the default build of ./hataori ./lanes depends on a serialization library"
fi
CGO_ENABLED=0 go list -deps -tags mpirt ./hataori | grep -q '^github.com/vmihailenco/msgpack/v5$' ||
  fail "(b) -tags mpirt does not list msgpack: the check above proves nothing"
ok "(b) default build of ./hataori ./lanes: no github.com/vmihailenco package in go list -deps"

# (c) both tags: the intended compile error.
if go build -tags mpirt,mpicgo ./hataori/internal/mpi/ > "$tmp/both.txt" 2>&1; then
  fail "(c) -tags mpirt,mpicgo compiled"
fi
grep -q 'Hataori_build_tags_mpirt_and_mpicgo_are_mutually_exclusive' "$tmp/both.txt" || {
  cat "$tmp/both.txt" >&2
  fail "(c) -tags mpirt,mpicgo failed without the conflict message"
}
ok "(c) -tags mpirt,mpicgo fails: $(grep -o 'undefined: Hataori_build_tags[A-Za-z_]*' "$tmp/both.txt" | head -1)"

# (c') the cgo backend without cgo: one named error, not a wall of undefined names.
if CGO_ENABLED=0 go build -tags mpicgo ./hataori > "$tmp/nocgo.txt" 2>&1; then
  fail "(c') CGO_ENABLED=0 -tags mpicgo compiled"
fi
if ! grep -q 'Hataori_build_tag_mpicgo_needs_cgo' "$tmp/nocgo.txt" || [ "$(grep -c 'undefined' "$tmp/nocgo.txt")" -ne 1 ]; then
  cat "$tmp/nocgo.txt" >&2
  fail "(c') CGO_ENABLED=0 -tags mpicgo failed without the one named error"
fi
ok "(c') CGO_ENABLED=0 -tags mpicgo fails: $(grep -o 'undefined: Hataori_build_tag_mpicgo[A-Za-z_]*' "$tmp/nocgo.txt" | head -1)"

# (d) cgo backend against each MPI.
for pair in "mpicc libmpi.so.40" "mpicc.mpich libmpich.so"; do
  set -- $pair
  cc="$1" want="$2"
  if ! command -v "$cc" > /dev/null; then
    [ "${HATAORI_REQUIRE_MPI:-0}" = 1 ] && fail "(d) $cc not found"
    echo "check-builds: skip (d) $cc not found"
    continue
  fi
  CC="$cc" go build -tags mpicgo ./hataori/... || fail "(d) CC=$cc go build -tags mpicgo ./hataori/..."
  CC="$cc" go build -tags mpicgo -o "$tmp/pingpong-$cc" ./scripts/bench/pingpong ||
    fail "(d) CC=$cc build of scripts/bench/pingpong"
  CC="$cc" prog_build "$tmp/prog-$cc" -tags mpicgo || fail "(d) CC=$cc build of a user program with -tags mpicgo"
  ldd "$tmp/prog-$cc" | grep -q "$want" || fail "(d) the CC=$cc binary does not link $want"
  ok "(d) CC=$cc -tags mpicgo builds and links $want"
done
