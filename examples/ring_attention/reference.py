#!/usr/bin/env python3
"""Checks that ring_attention.sf computes attention: random Q, K, V blocks for
every rank go in through `symmflow run --inputs`, the ranks' outputs come back
through `--save-outputs`, and sampled rows are compared with
softmax(Q K^T / sqrt(d)) V over the whole sequence, computed here directly (in
f64, plain Python: no numpy needed) to a tolerance. The run itself is also
`--check`ed (eager vs compiled, bitwise).

    python3 examples/ring_attention/reference.py --symmflow build/dev/symmflow --nproc 4
"""
import argparse
import math
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from npy_files import read_npy, write_npy  # noqa: E402  (examples/npy_files.py)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symmflow", required=True, help="the symmflow binary")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--program", default=os.path.join(HERE, "ring_attention.sf"))
    ap.add_argument("--rows", type=int, default=8, help="query rows checked per rank (spread over the block)")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max |out - ref| / (1 + max |ref|)")
    args = ap.parse_args()

    with open(args.program) as f:
        m = re.search(r"%q: f32\[(\d+), (\d+)\]", f.read())
    if not m:
        sys.exit(f"{args.program}: expected a signature with %q: f32[T, d]")
    t, d, world = int(m.group(1)), int(m.group(2)), args.nproc
    rng = random.Random(20250101)
    blocks = {name: [[rng.gauss(0.0, 1.0) for _ in range(t * d)] for _ in range(world)] for name in "qkv"}

    with tempfile.TemporaryDirectory(prefix="sf-ring-attention-") as tmp:
        for name, per_rank in blocks.items():
            for r, values in enumerate(per_rank):
                write_npy(os.path.join(tmp, f"{name}.rank{r}.npy"), (t, d), values)
        # What the file holds, as f32: the reference starts from the same numbers.
        for name in blocks:
            blocks[name] = [read_npy(os.path.join(tmp, f"{name}.rank{r}.npy"))[1] for r in range(world)]
        cmd = [args.symmflow, "run", args.program, "--nproc", str(world), "--check", "--inputs", tmp,
               "--save-outputs", tmp]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stdout}{run.stderr}")
        outs = [read_npy(os.path.join(tmp, f"out0.rank{r}.npy")) for r in range(world)]

    keys = [blocks["k"][r][j * d:(j + 1) * d] for r in range(world) for j in range(t)]
    vals = [blocks["v"][r][j * d:(j + 1) * d] for r in range(world) for j in range(t)]
    scale = 1.0 / math.sqrt(d)
    worst, ref_max = 0.0, 0.0
    rows = sorted({round(i * (t - 1) / max(args.rows - 1, 1)) for i in range(args.rows)})
    for r in range(world):
        shape, out = outs[r]
        if tuple(shape) != (t, d):
            sys.exit(f"rank {r}: expected an output of shape ({t}, {d}), found {shape}")
        for i in rows:
            q = blocks["q"][r][i * d:(i + 1) * d]
            scores = [scale * sum(a * b for a, b in zip(q, kj)) for kj in keys]
            top = max(scores)
            p = [math.exp(s - top) for s in scores]
            total = sum(p)
            for c in range(d):
                ref = sum(pj * vj[c] for pj, vj in zip(p, vals)) / total
                ref_max = max(ref_max, abs(ref))
                worst = max(worst, abs(out[i * d + c] - ref))
    rel = worst / (1.0 + ref_max)
    ok = rel <= args.tolerance
    print(f"reference: {'OK' if ok else 'MISMATCH'} ({world} ranks, {world * t} tokens, d = {d}, {len(rows)} rows per "
          f"rank: max |out - ref| = {worst:.3g}, relative {rel:.3g}, tolerance {args.tolerance:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
