#!/usr/bin/python3
"""One core's matmul rate in PyTorch (oneDNN), the P of the FLOP roofline in
docs/performance.md ("The FLOP roofline of the 0.5x goals").

    /usr/bin/python3 bench/gemm_peak.py [--sizes 512,1024] [--trials 15]

CPU time (time.process_time), so other processes' load counts little: median
and best GFLOP/s of n x n @ n x n per size, one thread.
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="512,1024")
    ap.add_argument("--trials", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| n | median ms (CPU) | GFLOP/s median | GFLOP/s best |")
    print("|---|---|---|---|")
    for n in (int(s) for s in args.sizes.split(",")):
        a, b = torch.randn(n, n), torch.randn(n, n)
        for _ in range(3):
            a @ b
        ts = []
        for _ in range(args.trials):
            t = time.process_time()
            a @ b
            ts.append(time.process_time() - t)
        med = statistics.median(ts)
        flops = 2 * n ** 3
        print(f"| {n} | {med * 1e3:.2f} | {flops / med / 1e9:.1f} | {flops / min(ts) / 1e9:.1f} |")


if __name__ == "__main__":
    main()
