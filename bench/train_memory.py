#!/usr/bin/python3
"""Memory of a data-parallel training step: symmflow's compiled step against the
same step in PyTorch eager (DistributedDataParallel, gloo), in one job.

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- \\
        /usr/bin/python3 bench/train_memory.py [--d 1024] [--layers 4] [--batch 256]

The step is train_ddp.py's: a d x d MLP (ReLU between layers), MSE loss, SGD,
batch `--batch` per rank. For each variant, on each rank, from the process's
resident memory before the variant is built (its inputs already made):

- resident: what stays after two warm-up steps (model, gradients; for symmflow
  the compiled program's arenas, its kept kernel temporaries, the symmetric heap
  pages it touched);
- peak: the highest resident memory during three more steps (Linux: the peak
  is reset through /proc/self/clear_refs first), so peak - resident is what a
  step needs on top.

Resident memory counts what a process touched, not what it asked for; it is
what a user's machine has to hold. Rank 0 prints MiB, and for symmflow the
compiled program's own accounting (ProgramStats: regular, symmetric and
temporary bytes).
"""
import argparse
import gc

import torch
import torch.distributed as dist
import torch.nn.functional as F

import symmflow.torch as sft
from train_ddp import init_both, mlp


def status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS


def measure(build, steps=3):
    gc.collect()
    base = status_kib("VmRSS")
    step = build()
    step()
    step()
    resident = status_kib("VmRSS")
    reset_peak()
    for _ in range(steps):
        step()
    peak = status_kib("VmHWM")
    return step, (resident - base) / 1024, (peak - base) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=256)
    a = ap.parse_args()

    rank, world = init_both("train_memory")
    g = torch.Generator().manual_seed(100 + rank)
    x, y = torch.randn(a.batch, a.d, generator=g), torch.randn(a.batch, a.d, generator=g)
    lr = 1e-3

    def ddp_build():
        ddp = torch.nn.parallel.DistributedDataParallel(mlp(a.d, a.layers, 0))
        opt = torch.optim.SGD(ddp.parameters(), lr=lr)

        def step():
            opt.zero_grad()
            F.mse_loss(ddp(x), y).backward()
            opt.step()
        return step

    held = {}

    def sf_build():
        dp = sft.DataParallel(mlp(a.d, a.layers, 0), F.mse_loss, lr=lr)
        held["dp"] = dp
        return lambda: dp.step(x, y)

    rows = []
    ddp_step, r, p = measure(ddp_build)
    rows.append(("PyTorch eager (DDP, gloo)", r, p))
    del ddp_step
    sf_step, r, p = measure(sf_build)
    rows.append(("symmflow compiled (sft.DataParallel)", r, p))
    dp = held["dp"]
    stats = dp._fn._entry((dp.params, dp.state, x, y), {}).program.stats()
    params_mib = sum(t.numel() * t.element_size() for t in dp.params) / 2**20
    if rank == 0:
        print(f"train_memory: {a.layers}-layer MLP d={a.d}, batch {a.batch} per rank, {world} ranks, SGD; "
              f"parameters {params_mib:.1f} MiB; rank 0, MiB over the process before the variant")
        print("| variant | resident after warm-up | peak during a step | peak - resident |")
        print("|---|---|---|---|")
        for name, r, p in rows:
            print(f"| {name} | {r:.1f} | {p:.1f} | {p - r:.1f} |")
        mib = lambda b: b / 2**20
        print(f"symmflow program: regular arena {mib(stats['regular_bytes']):.1f} MiB, symmetric "
              f"{mib(stats['symmetric_bytes']):.1f} MiB, kept temporaries {mib(stats['temporary_bytes']):.1f} MiB, "
              f"{stats['allocations']} allocations in the last step, {stats['copies']} copies")
    sft.all_reduce(torch.zeros(1))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
