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
import array
import ast
import math
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{n}, " for n in shape)
    pad = 64 - (10 + len(header) + 1) % 64  # the whole header a multiple of 64 bytes, ending in '\n'
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode("latin1"))
        array.array("f", values).tofile(f)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x93NUMPY\x01\x00":
        sys.exit(f"{path}: expected a .npy file of format version 1.0, found {data[:8]!r}")
    n = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + n].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit(f"{path}: expected little-endian f32 in C order, found {header}")
    values = array.array("f")
    values.frombytes(data[10 + n:])
    return header["shape"], values


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
