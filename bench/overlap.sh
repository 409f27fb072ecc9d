#!/usr/bin/env bash
# Overlap of communication with compute, on a simulated link (DESIGN.md §7;
# docs/performance.md "Overlap"). For one .sf program at NPROC ranks it runs, in
# rounds (A B C D A B C D ...) so that machine drift hits every variant alike:
#   eager      op by op, with the simulated link
#   serial     compiled --no-overlap (every wait right after its start), with the link
#   overlap    compiled (the scheduler's order), with the link
#   compute    compiled --no-overlap without the link: everything but the link
# and reports medians, comm = serial - compute (the link time a serial schedule
# pays), and overlap / max(compute, comm): 1.0 is perfect overlap.
#
#   bench/overlap.sh PROG.sf LAT_US GBPS [BUILD] [ROUNDS] [ITERS]
#   bench/overlap.sh examples/ring_attention/ring_attention.sf 2000 1 build/dev 7 20
set -euo pipefail
PROG=$1
LAT=$2
GBPS=$3
BUILD=${4:-build/dev}
ROUNDS=${5:-7}
ITERS=${6:-20}
NPROC=${NPROC:-2}
SF="$BUILD/symmflow"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
LINK=(--sim-link-latency-us "$LAT" --sim-link-gbps "$GBPS")
for r in $(seq "$ROUNDS"); do
  "$SF" run "$PROG" --nproc "$NPROC" --mode eager --iters "$ITERS" "${LINK[@]}" --json "$OUT/eager.$r.json" > /dev/null
  "$SF" run "$PROG" --nproc "$NPROC" --no-overlap --iters "$ITERS" "${LINK[@]}" --json "$OUT/serial.$r.json" > /dev/null
  "$SF" run "$PROG" --nproc "$NPROC" --iters "$ITERS" "${LINK[@]}" --json "$OUT/overlap.$r.json" > /dev/null
  "$SF" run "$PROG" --nproc "$NPROC" --no-overlap --iters "$ITERS" --json "$OUT/compute.$r.json" > /dev/null
done
python3 - "$OUT" "$ROUNDS" "$NPROC" "$PROG" "$LAT" "$GBPS" <<'PY'
import json, statistics, sys
out, rounds, nproc, prog, lat, gbps = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
def med(kind, key):
    return statistics.median(json.load(open(f"{out}/{kind}.{r}.json"))[key] for r in range(1, rounds + 1)) * 1e6
eager, serial, overlap, compute = med("eager", "eager_s"), med("serial", "compiled_s"), med("overlap", "compiled_s"), med("compute", "compiled_s")
comm = max(serial - compute, 0.0)
bound = max(compute, comm)
print(f"{prog} at {nproc} ranks, link {lat} us + {gbps} Gbit/s, median of {rounds} rounds (µs per run)")
print("| program | eager | compiled, no overlap | compiled, overlap | compute | comm | overlap / max(compute, comm) |")
print("|---|---|---|---|---|---|---|")
print(f"| {prog.split('/')[-1]} | {eager:.0f} | {serial:.0f} | {overlap:.0f} | {compute:.0f} | {comm:.0f} | {overlap / bound:.2f} |")
PY
