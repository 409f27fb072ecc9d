#!/usr/bin/env bash
# Hierarchical all_reduce vs MPI_Allreduce on the same ranks, in the setups of
# docs/performance.md ("Multi-node"): simulated nodes on one host, and two
# hosts as network namespaces over TCP (root only; skipped otherwise).
#
#   bench/multinode.sh [BUILD_DIR] [OUT_DIR]      (defaults: build/dev, /tmp/sf-multinode)
#
# Every mpirun uses --bind-to none: each namespace's mpirun believes it owns
# the machine and would bind its first rank to core 0 on both "hosts", which
# makes MPI's busy-polling ranks share one core (measured: 5.3 ms instead of
# 11 us for a 1 KiB MPI_Allreduce).
set -eu
BUILD=$(realpath "${1:-build/dev}")
OUT=${2:-/tmp/sf-multinode}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
HERE=$(cd "$(dirname "$0")/.." && pwd)
CLI="$BUILD/symmflow"
TRIALS=${TRIALS:-7}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
M=(mpirun --oversubscribe --bind-to none)

run() {  # name, mpirun args...
  local name=$1; shift
  echo "== $name: $*"
  timeout 600 "$@" "$CLI" bench collectives --trials "$TRIALS" --json "$OUT/$name.json" \
    | tee "$OUT/$name.txt"
}

run sim-2x2 "${M[@]}" -np 4 -x SYMMFLOW_RANKS_PER_NODE=2
run sim-2x1 "${M[@]}" -np 2 -x SYMMFLOW_RANKS_PER_NODE=1

if ! bash "$HERE/tests/multinode/netns_hosts.sh" check; then
  echo "network-namespace setups skipped"
  exit 0
fi
export CLI OUT TRIALS
bash "$HERE/tests/multinode/netns_hosts.sh" run 2 -- bash -c '
  set -eu
  read -r h1 h2 <<< "$SF_NETNS_IPS"
  for shape in 2x1 2x2; do
    n=${shape#2x}
    echo "== netns-$shape"
    timeout 600 "$SF_NETNS_EXEC" "$h1" mpirun --allow-run-as-root --oversubscribe --bind-to none \
      -H "$h1:$n,$h2:$n" -np $((2 * n)) --mca plm_rsh_agent "$SF_NETNS_AGENT" \
      --mca btl tcp,self,vader --mca btl_tcp_if_include "$SF_NETNS_SUBNET" \
      --mca oob_tcp_if_include "$SF_NETNS_SUBNET" \
      "$CLI" bench collectives --trials "$TRIALS" --json "$OUT/netns-$shape.json" \
      | tee "$OUT/netns-$shape.txt"
  done'
