#!/usr/bin/env bash
# Installs what the checks need and is missing: Debian's Open MPI and MPICH
# (with their compilers and headers), gcc, and staticcheck through the Go
# module proxy. Safe to run again: it installs nothing that is present.
set -euo pipefail

export PATH="/usr/local/go/bin:$(go env GOPATH 2>/dev/null || echo "$HOME/go")/bin:$PATH"

missing=()
for pkg in gcc make openmpi-bin libopenmpi-dev mpich libmpich-dev python3-mpi4py; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v staticcheck >/dev/null 2>&1; then
	echo "setup: installing staticcheck"
	GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
