"""The same PyTorch functions run as PyTorch eager with torch.distributed (gloo)
and as sft.compile, side by side in one job (docs/performance.md "From PyTorch").

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- \\
        /usr/bin/python3 bench/torch_vs_symmflow.py [--trials 7] [--iters 20] [--json out.json]

Workloads (per rank, 2 ranks):
  tp_mlp        x[512, 256] -> fc1 (256 -> 512, this rank's shard) -> GELU -> fc2 (512 -> 256) -> all_reduce
  tp_block      T=256, d=512, 8 heads split across ranks: layer norm, causal attention, all_reduce,
                residual, layer norm, MLP (4d, split), all_reduce, residual
  tiny          x[4] + 1: what one call of a compiled function costs over its program's own run

Variants, in rounds (A B C A B C ...) so that machine drift hits all alike:
  torch         PyTorch eager compute, torch.distributed (gloo) all_reduce
  torch+sf      PyTorch eager compute, symmflow's eager all_reduce (sft.all_reduce_)
  compiled      sft.compile of the same function (symmflow's kernels and runtime)
Each trial times `iters` calls after a barrier; the table gives the median of the
trials in microseconds per call, and ratios to `torch`.
"""
import argparse
import json
import math
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import symmflow.torch as sft


def tp_mlp_fn(all_reduce_):
    def f(x, w1, b1, w2):
        y = F.linear(F.gelu(F.linear(x, w1, b1)), w2)
        all_reduce_(y)
        return y
    return f


def tp_block_fn(all_reduce_, heads_local, dh):
    def f(x, ln1_w, ln1_b, wq, wk, wv, wo, ln2_w, ln2_b, w1, b1, w2):
        T, d = x.shape
        h = F.layer_norm(x, (d,), ln1_w, ln1_b)
        q = F.linear(h, wq).view(T, heads_local, dh).transpose(0, 1)
        k = F.linear(h, wk).view(T, heads_local, dh).transpose(0, 1)
        v = F.linear(h, wv).view(T, heads_local, dh).transpose(0, 1)
        s = q @ k.transpose(-2, -1) / math.sqrt(dh)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        a = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1) @ v
        o = F.linear(a.transpose(0, 1).reshape(T, heads_local * dh), wo)
        all_reduce_(o)
        x = x + o
        m = F.linear(F.gelu(F.linear(F.layer_norm(x, (d,), ln2_w, ln2_b), w1, b1)), w2)
        all_reduce_(m)
        return x + m
    return f


def tiny(x):
    return x + 1


def timed(fn, args, iters, barrier):
    barrier()
    t0 = time.perf_counter()
    for _ in range(iters):
        fn(*args)
    return (time.perf_counter() - t0) / iters * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--json", default="")
    ap.add_argument("--only", default="")
    a = ap.parse_args()

    torch.set_num_threads(1)
    sft.init()
    rank, world = sft.rank(), sft.world_size()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29500 + (os.getppid() % 1000)))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    barrier = lambda: sft.all_reduce(torch.zeros(1))

    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g) * 0.05
    gloo = lambda t: dist.all_reduce(t)
    sfar = lambda t: sft.all_reduce_(t)

    work = {}
    hid = 512
    mlp_args = [r(512, 256), r(hid, 256), r(hid), r(256, hid)]
    work["tp_mlp"] = (tp_mlp_fn(gloo), tp_mlp_fn(sfar), mlp_args)
    T, d, H = 256, 512, 8
    hl, dh = H // world, d // H
    blk_args = [r(T, d), 1 + r(d), r(d), r(hl * dh, d), r(hl * dh, d), r(hl * dh, d), r(d, hl * dh),
                1 + r(d), r(d), r(4 * d // world, d), r(4 * d // world), r(d, 4 * d // world)]
    work["tp_block"] = (tp_block_fn(gloo, hl, dh), tp_block_fn(sfar, hl, dh), blk_args)

    results = []
    for name, (f_torch, f_sf, args) in work.items():
        if a.only and name != a.only:
            continue
        fast = sft.compile(f_sf, name=name)
        fast(*args)  # trace + compile outside the timing
        ref = f_torch(*args)
        torch.testing.assert_close(fast(*args), ref, atol=1e-3, rtol=1e-3)
        times = {"torch": [], "torch+sf": [], "compiled": []}
        for _ in range(a.trials):
            times["torch"].append(timed(f_torch, args, a.iters, barrier))
            times["torch+sf"].append(timed(f_sf, args, a.iters, barrier))
            times["compiled"].append(timed(fast, args, a.iters, barrier))
        med = {k: statistics.median(v) for k, v in times.items()}
        results.append({"workload": name, "nproc": world, **{f"{k}_us": v for k, v in med.items()},
                        "compiled_over_torch": med["compiled"] / med["torch"],
                        "copies": fast.explain(*args).splitlines()[0].split(": ", 1)[1]})

    # Overhead of a call: fast(x) against the program's own run on prepared inputs.
    if not a.only or a.only == "tiny":
        x = torch.zeros(4)
        fast = sft.compile(tiny)
        fast(x)
        entry = fast._entry((x,), {})
        prepared = fast._sf_inputs(entry, (x,), {})
        call, own = [], []
        for _ in range(a.trials):
            call.append(timed(fast, [x], a.iters * 50, lambda: None))
            own.append(timed(entry.program.run, [prepared], a.iters * 50, lambda: None))
        results.append({"workload": "tiny", "nproc": world, "call_us": statistics.median(call),
                        "program_us": statistics.median(own),
                        "overhead_us": statistics.median(call) - statistics.median(own)})

    if rank == 0:
        print(f"{'workload':10} {'torch (gloo) us':>16} {'torch+sf comm us':>17} {'compiled us':>12} "
              f"{'compiled/torch':>15}  copies")
        for res in results:
            if res["workload"] == "tiny":
                continue
            print(f"{res['workload']:10} {res['torch_us']:16.0f} {res['torch+sf_us']:17.0f} "
                  f"{res['compiled_us']:12.0f} {res['compiled_over_torch']:15.2f}  {res['copies']}")
        for res in results:
            if res["workload"] == "tiny":
                print(f"tiny: fast(x) {res['call_us']:.1f} us, its program alone {res['program_us']:.1f} us, "
                      f"overhead {res['overhead_us']:.1f} us per call")
        if a.json:
            with open(a.json, "w") as f:
                json.dump(results, f, indent=2)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
