#!/usr/bin/python3
"""Large eager results with and without the block cache (core/block_cache.h), in
processes that run one side only.

    PYTHONPATH=build/dev/python /usr/bin/python3 bench/large_blocks.py [--n 4096] [--calls 7]

The chain relu(x + row) * 0.5 over an n x n f32 tensor (64 MiB at n = 4096):
symmflow fused (one symmflow::fused_pointwise call), symmflow eager (three
calls), each in a child process with SYMMFLOW_ALLOC_CACHE unset (the cache on)
and =0 (off), and PyTorch eager in a child process of its own: a process that
also ran PyTorch's large ops would see their unmapping slow its own next touch
(docs/performance.md, "Round 14"). Prints ms per call, the first call apart
(it faults its blocks in on any allocator).
"""
import argparse
import os
import subprocess
import sys
import time


def child(side, n, calls):
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import kernels as K
    g = torch.Generator().manual_seed(0)
    x, row = torch.rand(n, n, generator=g), torch.rand(n, generator=g)
    fns = {
        "fused": K.sf_op("symmflow::fused_pointwise", [x, row], K.BIAS_RELU),
        "eager": lambda: K.sf_call("aten::mul", K.sf_call("aten::relu", K.sf_call("aten::add", x, row)[0])[0], 0.5),
        "torch": lambda: torch.relu(x + row) * 0.5,
    }
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        fns[side]()
        out.append((time.perf_counter() - t) * 1e3)
    print(" ".join("%.1f" % v for v in out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=7)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.n, a.calls)
    print("relu(x + row) * 0.5, x f32[%d, %d], ms per call (first call, then the rest)" % (a.n, a.n))
    for side, cache in (("fused", None), ("fused", "0"), ("eager", None), ("eager", "0"), ("torch", None)):
        env = dict(os.environ)
        env.pop("SYMMFLOW_ALLOC_CACHE", None)
        if cache is not None:
            env["SYMMFLOW_ALLOC_CACHE"] = cache
        r = subprocess.run([sys.executable, __file__, "--child", side, "--n", str(a.n), "--calls", str(a.calls)],
                           env=env, capture_output=True, text=True, check=True)
        times = r.stdout.split()
        label = side if side == "torch" else "symmflow %s, cache %s" % (side, "off" if cache == "0" else "on")
        print("%-28s first %8s   then %s" % (label, times[0], " ".join(times[1:])))


if __name__ == "__main__":
    main()
