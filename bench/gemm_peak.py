#!/usr/bin/python3
"""One core's matmul rate in PyTorch (oneDNN), the P of the FLOP roofline in
docs/performance.md ("The FLOP roofline of the 0.5x goals").

    /usr/bin/python3 bench/gemm_peak.py [--sizes 512,1024] [--trials 15] [--programs]

CPU time (time.process_time), so other processes' load counts little: median
and best GFLOP/s of n x n @ n x n per size, one thread.

--programs also times the matmuls alone of the 2-rank programs that the 0.5x
goals name (bench/torch_vs_symmflow.py's tp_mlp/512 and tp_block, per rank),
with their own shapes: the measured floor of any implementation that calls
kernels as fast as PyTorch's, since these shapes run below the square peak.
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F


def cpu_times(fn, trials):
    for _ in range(3):
        fn()
    ts = []
    for _ in range(trials):
        t = time.process_time()
        fn()
        ts.append(time.process_time() - t)
    return ts


def program_matmuls(world=2):
    """name: (the program's matmuls as one function, their FLOPs), per rank."""
    r = torch.randn
    x, w1, w2 = r(512, 256), r(512, 256), r(256, 512)  # tp_mlp/512: x @ w1^T, gelu, @ w2^T
    h = r(512, 512)
    mlp = (lambda: (F.linear(x, w1), F.linear(h, w2)), 2 * 2 * 512 * 256 * 512)
    T, d, H = 256, 512, 8  # tp_block: q, k, v, scores, probs @ v, out, fc1, fc2
    hl, dh, f = H // world, d // H, 4 * d // world
    xb, wq, wo = r(T, d), r(hl * dh, d), r(d, hl * dh)
    q, p, a = r(hl, T, dh), r(hl, T, T), r(T, hl * dh)
    w1b, hb, w2b = r(f, d), r(T, f), r(d, f)

    def block():
        for _ in range(3):
            F.linear(xb, wq)
        torch.bmm(q, q.transpose(1, 2))
        torch.bmm(p, q)
        F.linear(a, wo)
        F.linear(xb, w1b)
        F.linear(hb, w2b)
    block_flops = 2 * (3 * T * d * hl * dh + 2 * hl * T * T * dh + T * hl * dh * d + 2 * T * d * f)
    return {"tp_mlp/512": mlp, "tp_block": (block, block_flops)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="512,1024")
    ap.add_argument("--trials", type=int, default=15)
    ap.add_argument("--programs", action="store_true", help="also time the 0.5x programs' matmuls alone")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| n | median ms (CPU) | GFLOP/s median | GFLOP/s best |")
    print("|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        a, b = torch.randn(n, n), torch.randn(n, n)
        ts = cpu_times(lambda: a @ b, args.trials)
        med = statistics.median(ts)
        flops = 2 * n ** 3
        print(f"| {n} | {med * 1e3:.2f} | {flops / med / 1e9:.1f} | {flops / min(ts) / 1e9:.1f} |")
    if args.programs:
        print()
        print("| program (per rank, 2 ranks) | matmul MFLOP | median ms (CPU) | best ms | GFLOP/s median |")
        print("|---|---|---|---|---|")
        for name, (fn, flops) in program_matmuls().items():
            ts = cpu_times(fn, args.trials)
            med = statistics.median(ts)
            print(f"| {name} | {flops / 1e6:.0f} | {med * 1e3:.2f} | {min(ts) * 1e3:.2f} | {flops / med / 1e9:.1f} |")


if __name__ == "__main__":
    main()
