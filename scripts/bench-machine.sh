#!/usr/bin/env bash
# bench-machine.sh: two costs of this machine that bound Pmap's figures
# (scripts/bench/machine, no MPI):
#   wake-ups  what a wake-up on a shared CPU costs the thread computing
#             there: a timed nanosleep wake-up (a coordinator backing off),
#             a raw futex wake (the kick remote ranks hand TASKs and RESULTs
#             over with) and a Go channel round trip between locked
#             goroutines; they bound small items on ranks bound to one core
#             each (docs/ARCHITECTURE.md "Waiting on a shared core");
#   memory    first and second touch of fresh memory, µs per MiB; every
#             remote Pmap result is received into fresh memory.
# Medians of interleaved rounds. docs/PERFORMANCE.md, "Machine costs", quotes them.
#
# Usage: scripts/bench-machine.sh [-rounds N] [-chunk µs] [-d duration] [-mib N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec go run ./scripts/bench/machine "$@"
