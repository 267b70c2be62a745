#!/usr/bin/env bash
# bench-hosts.sh: the benchmarks of the "beyond one machine" issue, on one
# host and across two test hosts (network namespaces, Open MPI over TCP
# only; see scripts/multihost.sh), 4 ranks (2 per host), run-time backend:
#   prefetch  the seed's prefetch gate: latency-bound small items,
#             compute-heavy items and small payloads, prefetch off and on
#             interleaved, 7 rounds each, medians and their ratio
#   skew      64 heavy-tailed sleep items at batch 1 against the
#             zero-overhead greedy schedule of the same measured durations
#   cpu       20,000 CPU-bound items of ~20 µs, zero Options, MPI-only, on
#             2 ranks: one host (default binding) and one rank per host
#             (scripts/bench/pmap -case cpu; ideal: 2 cores; across the
#             hosts --bind-to none, since both namespaces share the
#             machine's cores and each launcher would bind its rank to core 0)
#   start     how soon a call's first item runs after the root's and the
#             last rank's entry, against a raw MPI_Barrier in the same
#             rounds (scripts/bench/pmap -case start)
#   fixed     the fixed cost of an 8-item Pmap and an 8-byte Broadcast
#             against raw dup + Allreduce + free, 4 ranks (2 per host), as
#             scripts/bench-fixed.sh (scripts/bench/fixed, 21 repetitions)
# Each case prints items per rank and per slot beside its figures. Needs
# root (for the hosts). Usage: scripts/bench-hosts.sh [prefetch|skew|start|cpu|fixed|all]
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
export PATH="/usr/local/go/bin:$PATH"
eval "$(scripts/build-wrappers.sh)"
bin="$(mktemp -d)/benchpmap"
trap 'rm -rf "$(dirname "$bin")"' EXIT
CGO_ENABLED=0 go build -tags mpirt -o "$bin" ./scripts/bench/pmap
CGO_ENABLED=0 go build -tags mpirt -o "$(dirname "$bin")/benchfixed" ./scripts/bench/fixed
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MPI_RT_LIB="$HATAORI_WRAPPER_OPENMPI"

cases=(prefetch skew start cpu fixed)
[ "$which" = all ] || cases=("$which")
for c in "${cases[@]}"; do
	if [ "$c" = cpu ]; then
		echo "== cpu: one host (2 ranks, shared memory, default binding)"
		timeout 600 mpirun -n 2 "$bin" -case cpu -configs mpi-only -batches 0
		echo "== cpu: two hosts (1 + 1 ranks, Open MPI over TCP only)"
		# shellcheck disable=SC2016 # expanded inside the first host
		scripts/multihost.sh -- bash -c '
			hosts=$(echo $MULTIHOST_ADDRS | sed "s/\([^ ]*\)/\1:1/g; s/ /,/")
			exec timeout 600 mpirun -n 2 --bind-to none --host "$hosts" \
				--mca plm_rsh_agent "$MULTIHOST_AGENT" --mca btl tcp,self \
				--mca btl_tcp_if_include "$MULTIHOST_SUBNET" --mca oob_tcp_if_include "$MULTIHOST_SUBNET" \
				-x MPI_RT_LIB -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
				'"$bin"' -case cpu -configs mpi-only -batches 0'
		continue
	fi
	args="-case $c"
	prog="$bin"
	if [ "$c" = fixed ]; then
		args="-reps 21"
		prog="$(dirname "$bin")/benchfixed"
	fi
	echo "== $c: one host (4 ranks, shared memory, default binding)"
	# shellcheck disable=SC2086 # args holds several words
	timeout 600 mpirun --oversubscribe -n 4 "$prog" $args
	echo "== $c: two hosts (2 + 2 ranks, Open MPI over TCP only)"
	# shellcheck disable=SC2016 # expanded inside the first host
	scripts/multihost.sh -- bash -c '
		hosts=$(echo $MULTIHOST_ADDRS | sed "s/\([^ ]*\)/\1:2/g; s/ /,/")
		exec timeout 600 mpirun --oversubscribe -n 4 --host "$hosts" \
			--mca plm_rsh_agent "$MULTIHOST_AGENT" --mca btl tcp,self \
			--mca btl_tcp_if_include "$MULTIHOST_SUBNET" --mca oob_tcp_if_include "$MULTIHOST_SUBNET" \
			-x MPI_RT_LIB -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
			'"$prog $args"
done
