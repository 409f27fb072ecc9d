#!/usr/bin/python3
"""Data-parallel training step: symmflow's compiled DataParallel step against
PyTorch's DistributedDataParallel (gloo), side by side in one job.

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- \\
        /usr/bin/python3 bench/train_ddp.py [--d 1024] [--layers 4] [--batch 256] [--rounds 5] [--iters 5]

A d x d MLP (ReLU between layers), MSE loss, SGD, batch `--batch` per rank.
Variants, timed in alternating rounds so that drift hits each alike (median of
the rounds' per-step means, ms):

- ddp:        torch.nn.parallel.DistributedDataParallel + torch.optim.SGD (gloo)
- sf:         sft.DataParallel (one compiled program per step, overlap on)
- sf_serial:  the same step compiled with overlap=False (each collective waited
              on right after it starts)
- sf_nocomm:  the same step without the gradients' all_reduce (compute alone)

comm = sf_serial - sf_nocomm is the all_reduce time a serial schedule pays;
hidden = (sf_serial - sf) / comm is the fraction of it the overlapped schedule
hides behind backward's compute. The same fraction from the programs' own
timelines (less exposed to a busy machine's drift between variants): the time
spent blocked in the gradients' waits, overlapped against serial,
hidden (timeline) = 1 - blocked(sf) / blocked(sf_serial).
"""
import argparse
import datetime
import json
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import symmflow.torch as sft


def mlp(d, layers, seed):
    torch.manual_seed(seed)
    mods = []
    for i in range(layers):
        mods.append(torch.nn.Linear(d, d))
        if i + 1 < layers:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods)


def init_both(tag):
    """symmflow and torch.distributed (gloo) in one job, one thread per rank:
    (rank, world). `tag` keeps concurrent benches' gloo stores apart."""
    torch.set_num_threads(1)
    sft.init()
    rank, world = sft.rank(), sft.world_size()
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    store = f"/tmp/sf_bench_gloo.{tag}.{os.getppid()}"
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=120))
    return rank, world


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--bucket-bytes", type=int, default=sft._train.DEFAULT_BUCKET_BYTES)
    a = ap.parse_args()

    rank, world = init_both("train_ddp")
    barrier = lambda: sft.all_reduce(torch.zeros(1))

    g = torch.Generator().manual_seed(100 + rank)
    x, y = torch.randn(a.batch, a.d, generator=g), torch.randn(a.batch, a.d, generator=g)
    lr = 1e-3

    ref = mlp(a.d, a.layers, 0)
    ddp = torch.nn.parallel.DistributedDataParallel(ref)
    opt = torch.optim.SGD(ddp.parameters(), lr=lr)

    def ddp_step():
        opt.zero_grad()
        loss = F.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        return loss

    steps, dps = {"ddp": ddp_step}, {}
    for name, overlap in (("sf", True), ("sf_serial", False)):
        dp = sft.DataParallel(mlp(a.d, a.layers, 0), F.mse_loss, lr=lr, bucket_bytes=a.bucket_bytes, overlap=overlap)
        dps[name] = dp
        steps[name] = (lambda dp=dp: dp.step(x, y))
        if name == "sf" and rank == 0:
            explain = dp.explain(x, y)
        elif name == "sf":
            dp.explain(x, y)
    # The same step with each all_reduce_ an identity, traced so (the program is
    # cached after the first call): compute alone, layout of the gradients included.
    nocomm = sft.DataParallel(mlp(a.d, a.layers, 0), F.mse_loss, lr=lr, bucket_bytes=a.bucket_bytes)
    real = sft.all_reduce_
    sft.all_reduce_ = lambda t, op="sum", group="world": t
    try:
        nocomm.step(x, y)
    finally:
        sft.all_reduce_ = real
    steps["sf_nocomm"] = lambda: nocomm.step(x, y)

    for f in steps.values():  # trace, compile, warm up
        f()
        f()
    times = {k: [] for k in steps}
    for _ in range(a.rounds):
        for k, f in steps.items():
            barrier()
            t0 = time.perf_counter()
            for _ in range(a.iters):
                f()
            times[k].append((time.perf_counter() - t0) / a.iters * 1e3)
    blocked = {}
    for name, dp in dps.items():  # timelines: ms per step blocked in the gradients' waits
        program = dp._fn._entry((dp.params, dp.state, x, y), {}).program
        program.set_tracing(True)
        barrier()
        for _ in range(a.iters):
            dp.step(x, y)
        program.set_tracing(False)
        events = json.loads(program.trace_json())  # [label, location, rank, start us, duration us]
        blocked[name] = sum(e[4] for e in events if e[0].startswith("c10d::wait_tensor")) / a.iters / 1e3
    if rank == 0:
        med = {k: statistics.median(v) for k, v in times.items()}
        comm = med["sf_serial"] - med["sf_nocomm"]
        hidden = (med["sf_serial"] - med["sf"]) / comm if comm > 0 else float("nan")
        print(f"train_ddp: {a.layers}-layer MLP d={a.d}, batch {a.batch} per rank, {world} ranks, SGD; "
              f"median of {a.rounds} rounds x {a.iters} steps, ms per step")
        print("| ddp (gloo) | sf | sf / ddp | sf, no overlap | sf, no all_reduce | all_reduce (serial) | hidden "
              "| blocked in waits: overlap / serial | hidden (timeline) |")
        print("|---|---|---|---|---|---|---|---|---|")
        print(f"| {med['ddp']:.1f} | {med['sf']:.1f} | {med['sf'] / med['ddp']:.2f} | {med['sf_serial']:.1f} | "
              f"{med['sf_nocomm']:.1f} | {comm:.1f} | {hidden:.0%} | {blocked['sf']:.1f} / {blocked['sf_serial']:.1f} "
              f"| {1 - blocked['sf'] / blocked['sf_serial']:.0%} |")
        print(explain.splitlines()[0])
    barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
