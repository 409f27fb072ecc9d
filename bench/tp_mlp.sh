#!/usr/bin/env bash
# The TP MLP at 2 ranks: eager, compiled without placement (the all_reduce is
# staged), compiled with placement (mm writes into the symmetric arena). The three
# run in rounds (A B C A B C ...) so that machine drift hits all of them; each
# round's figure is symflow run's median per-run time over ITERS runs, and the
# table gives the median over ROUNDS rounds, the bytes copied per run, and ratios.
#
#   bench/tp_mlp.sh [BUILD] [ROUNDS] [ITERS]     e.g. bench/tp_mlp.sh build/dev 7 50
set -euo pipefail
BUILD=${1:-build/dev}
ROUNDS=${2:-7}
ITERS=${3:-50}
SF="$BUILD/symmflow"
PROG=${PROG:-bench/tp_mlp.sf}
NPROC=${NPROC:-2}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for r in $(seq "$ROUNDS"); do
  "$SF" run "$PROG" --nproc "$NPROC" --mode eager --iters "$ITERS" --json "$OUT/eager.$r.json" > /dev/null
  "$SF" run "$PROG" --nproc "$NPROC" --mode compiled --no-placement --iters "$ITERS" --json "$OUT/staged.$r.json" > /dev/null
  "$SF" run "$PROG" --nproc "$NPROC" --mode compiled --iters "$ITERS" --json "$OUT/placed.$r.json" > /dev/null
done
python3 - "$OUT" "$ROUNDS" "$NPROC" "$PROG" <<'PY'
import json, statistics, sys
out, rounds, nproc, prog = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def load(kind, key):
    runs = [json.load(open(f"{out}/{kind}.{r}.json")) for r in range(1, rounds + 1)]
    return statistics.median(j[key] for j in runs) * 1e6, runs[-1]
rows = []
for kind, key, label in [("eager", "eager_s", "eager"), ("staged", "compiled_s", "compiled, no placement (staged)"),
                         ("placed", "compiled_s", "compiled, placement")]:
    us, j = load(kind, key)
    c = j["copies"]
    rows.append((label, us, c, j))
base = rows[0][1]
print(f"{prog} at {nproc} ranks, median of {rounds} rounds")
print("| variant | median µs / run | x eager | bytes copied / run (staged + into symmetric) | symmetric arena bytes | algorithm |")
print("|---|---|---|---|---|---|")
for label, us, c, j in rows:
    if label == "eager":
        copied = j["eager_copies"]["bytes"]
    else:
        copied = c["staged"]["bytes"] + c["inputs_to_symmetric"]["bytes"]
    algo = ", ".join(sorted(set(j["algorithms"].values()))) or "-"
    print(f"| {label} | {us:.1f} | {us / base:.2f} | {copied} | {j['symmetric_bytes']} | {algo} |")
PY
