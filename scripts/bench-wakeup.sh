#!/usr/bin/env bash
# bench-wakeup.sh: what a wake-up on a shared CPU costs the thread that
# computes there (scripts/bench/wakeup): a timed nanosleep wake-up (a
# coordinator backing off), a raw futex wake (the kick that remote ranks
# hand TASKs and RESULTs over with) and a Go channel round trip between
# locked goroutines. No MPI. These are the costs that bound Pmap with
# small items on ranks bound to one core each (README "Performance",
# docs/ARCHITECTURE.md "Waiting on a shared core").
#
# Usage: scripts/bench-wakeup.sh [-rounds N] [-chunk µs] [-d duration]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go run ./scripts/bench/wakeup "$@"
