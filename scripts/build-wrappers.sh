#!/usr/bin/env bash
# build-wrappers.sh: build Hataori's MPIABI 2.x wrapper (wrapper/) against the
# system MPIs, one library per MPI:
#   Open MPI (mpicc)       -> $HATAORI_BUILD_DIR/wrappers/libmpiabi-openmpi.so
#   MPICH    (mpicc.mpich) -> $HATAORI_BUILD_DIR/wrappers/libmpiabi-mpich.so
# HATAORI_BUILD_DIR defaults to <repo>/build. A library is rebuilt only when
# it is older than the sources or this script. Prints one line per library:
#   export HATAORI_WRAPPER_OPENMPI=/abs/path/libmpiabi-openmpi.so
#   export HATAORI_WRAPPER_MPICH=/abs/path/libmpiabi-mpich.so
# so that callers can `eval "$(scripts/build-wrappers.sh)"`. Diagnostics go to
# stderr. An MPI whose compiler is missing is skipped with a message (exit 0)
# unless HATAORI_REQUIRE_MPI=1, where it is an error.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HATAORI_BUILD_DIR:-$root/build}"
out="$build/wrappers"
src="$root/wrapper/mpiabi_wrapper.c"
hdr="$root/wrapper/mpiabi.h"
self="$root/scripts/build-wrappers.sh"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

status=0

# build NAME VAR COMPILER
build() {
  local name="$1" var="$2" cc="$3"
  local lib="$out/libmpiabi-$name.so"
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "build-wrappers: $cc not found; skipping the $name wrapper (install the MPI development package)" >&2
    if [ "${HATAORI_REQUIRE_MPI:-0}" = 1 ]; then status=1; fi
    return 0
  fi
  if [ -f "$lib" ] && [ "$lib" -nt "$src" ] && [ "$lib" -nt "$hdr" ] && [ "$lib" -nt "$self" ]; then
    echo "build-wrappers: $lib is up to date" >&2
  else
    local tmp="$lib.tmp.$$"
    if ! "$cc" -O2 -fPIC -shared -Wall -Wextra -Werror -o "$tmp" "$src"; then
      rm -f "$tmp"
      echo "build-wrappers: building the $name wrapper with $cc failed" >&2
      status=1
      return 0
    fi
    mv -f "$tmp" "$lib"
    echo "build-wrappers: built $lib with $cc" >&2
  fi
  printf 'export %s=%q\n' "$var" "$lib"
}

build openmpi HATAORI_WRAPPER_OPENMPI mpicc
build mpich HATAORI_WRAPPER_MPICH mpicc.mpich
exit "$status"
