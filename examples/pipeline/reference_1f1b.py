#!/usr/bin/env python3
"""Checks that pipeline_1f1b.sf computes the unsharded model's weight gradients:
random inputs %x, targets %t and per-stage weights %w go in through `symmflow
run --inputs`, each stage's grad_w comes back through `--save-outputs`, and is
compared with the same model on one rank without a pipeline (every layer, the
whole batch at once), computed here directly in f64 (plain Python, no numpy),
to a tolerance. The run itself is also `--check`ed (eager vs compiled, bitwise).

    python3 examples/pipeline/reference_1f1b.py --symmflow build/dev/symmflow --nproc 4
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from npy_files import read_npy, write_npy  # noqa: E402  (examples/npy_files.py)


def matmul(a, b):  # lists of rows
    bt = list(zip(*b))
    return [[sum(x * y for x, y in zip(row, col)) for col in bt] for row in a]


def transpose(a):
    return [list(r) for r in zip(*a)]


def rows(flat, n):
    return [list(flat[i:i + n]) for i in range(0, len(flat), n)]


def unsharded_grads(x, ws, t):
    """Each layer's weight gradient of 0.5 * sum((a - t)^2), a the last layer's relu(h @ w)."""
    hs, ys = [x], []
    for w in ws:
        ys.append(matmul(hs[-1], w))
        hs.append([[max(v, 0.0) for v in r] for r in ys[-1]])
    grad_a = [[a - b for a, b in zip(ra, rt)] for ra, rt in zip(hs[-1], t)]
    grads = [None] * len(ws)
    for s in reversed(range(len(ws))):
        grad_y = [[g if y > 0 else 0.0 for g, y in zip(rg, ry)] for rg, ry in zip(grad_a, ys[s])]
        grads[s] = matmul(transpose(hs[s]), grad_y)
        grad_a = matmul(grad_y, transpose(ws[s]))
    return grads


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symmflow", required=True, help="the symmflow binary")
    ap.add_argument("--nproc", type=int, default=2, help="stages (2 or 4: the graphs pipeline_1f1b.sf holds)")
    ap.add_argument("--program", default=os.path.join(HERE, "pipeline_1f1b.sf"))
    ap.add_argument("--tolerance", type=float, default=1e-5, help="max |grad - ref| / (1 + max |ref|)")
    args = ap.parse_args()

    with open(args.program) as f:
        m = re.search(r"%x: f32\[(\d+), (\d+)\]", f.read())
    if not m:
        sys.exit(f"{args.program}: expected a signature with %x: f32[B, N]")
    batch, n, stages = int(m.group(1)), int(m.group(2)), args.nproc
    rng = random.Random(20251125)
    gauss = lambda count, scale: [scale * rng.gauss(0.0, 1.0) for _ in range(count)]

    with tempfile.TemporaryDirectory(prefix="sf-pipeline-1f1b-") as tmp:
        write_npy(os.path.join(tmp, "x.npy"), (batch, n), gauss(batch * n, 1.0))
        write_npy(os.path.join(tmp, "t.npy"), (batch, n), gauss(batch * n, 1.0))
        for r in range(stages):
            write_npy(os.path.join(tmp, f"w.rank{r}.npy"), (n, n), gauss(n * n, 0.25))
        # What the files hold, as f32: the reference starts from the same numbers.
        x = rows(read_npy(os.path.join(tmp, "x.npy"))[1], n)
        t = rows(read_npy(os.path.join(tmp, "t.npy"))[1], n)
        ws = [rows(read_npy(os.path.join(tmp, f"w.rank{r}.npy"))[1], n) for r in range(stages)]
        cmd = [args.symmflow, "run", args.program, "--nproc", str(stages), "--check", "--quiet", "--inputs", tmp,
               "--save-outputs", tmp]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stdout}{run.stderr}")
        outs = [read_npy(os.path.join(tmp, f"out0.rank{r}.npy")) for r in range(stages)]

    refs = unsharded_grads(x, ws, t)
    worst, ref_max = 0.0, 0.0
    for r, (shape, got) in enumerate(outs):
        if tuple(shape) != (n, n):
            sys.exit(f"rank {r}: expected grad_w of shape ({n}, {n}), found {shape}")
        for i, row in enumerate(refs[r]):
            for j, ref in enumerate(row):
                ref_max = max(ref_max, abs(ref))
                worst = max(worst, abs(got[i * n + j] - ref))
    rel = worst / (1.0 + ref_max)
    ok = rel <= args.tolerance
    print(f"reference: {'OK' if ok else 'MISMATCH'} ({stages} stages, batch {batch}, {n} features: every stage's "
          f"grad_w against the unsharded model's, max |grad - ref| = {worst:.3g}, relative {rel:.3g}, tolerance "
          f"{args.tolerance:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
