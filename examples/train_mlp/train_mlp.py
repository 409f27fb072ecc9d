#!/usr/bin/python3
"""Data-parallel training of a small MLP on a synthetic regression task, each step
one compiled symmflow program (forward, loss, backward, the gradients' bucketed
all_reduce overlapped with backward, the SGD or Adam update in place).

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- \\
        /usr/bin/python3 examples/train_mlp/train_mlp.py [--steps 300] [--check]

The task: fit a fixed random "teacher" MLP. Every rank draws its own part of each
global batch. --check also trains the same model in plain PyTorch (one process,
no communication) on the whole global batch, for the first --check-steps steps:
averaging the ranks' gradients is the gradient of the whole batch's mean loss,
so both must agree to f32 rounding; it then requires the loss to have decreased.
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

import symmflow.torch as sft


def model(d, hidden, seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, hidden),
                               torch.nn.ReLU(), torch.nn.Linear(hidden, d))


def global_batch(step, world, batch, d, teacher):
    """Step `step`'s batch of every rank, in rank order (the same on every rank)."""
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(world * batch, d, generator=g)
    with torch.no_grad():
        return x, teacher(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=32, help="samples per rank and step")
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    ap.add_argument("--lr", type=float, default=None, help="default: 0.1 (sgd), 0.003 (adam)")
    ap.add_argument("--eager", action="store_true", help="run the step eagerly instead of compiled")
    ap.add_argument("--check", action="store_true", help="compare the first steps with PyTorch")
    ap.add_argument("--check-steps", type=int, default=5)
    ap.add_argument("--every", type=int, default=50, help="print a progress line every N steps")
    a = ap.parse_args()
    lr = a.lr if a.lr is not None else (0.1 if a.optimizer == "sgd" else 0.003)

    torch.set_num_threads(1)
    sft.init()
    rank, world = sft.rank(), sft.world_size()
    teacher = model(a.d, 2 * a.d, seed=123)
    net = model(a.d, a.hidden, seed=0)
    dp = sft.DataParallel(net, F.mse_loss, lr=lr, optimizer=a.optimizer, momentum=0.9 if a.optimizer == "sgd" else 0,
                          compile=not a.eager)
    if a.check:
        ref = model(a.d, a.hidden, seed=0)
        opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=0.9) if a.optimizer == "sgd" else \
            torch.optim.Adam(ref.parameters(), lr=lr)

    losses = []
    t0 = time.perf_counter()
    for step in range(a.steps):
        x, y = global_batch(step, world, a.batch, a.d, teacher)
        mine = slice(rank * a.batch, (rank + 1) * a.batch)
        loss = sft.all_reduce(dp.step(x[mine], y[mine])) / world  # the global batch's mean loss
        losses.append(float(loss))
        if a.check and step < a.check_steps:
            opt.zero_grad()
            ref_loss = F.mse_loss(ref(x), y)
            ref_loss.backward()
            opt.step()
            torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-5, atol=1e-6)
            for p, q in zip(net.parameters(), ref.parameters()):
                torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=1e-5)
        if rank == 0 and ((step + 1) % a.every == 0 or step + 1 == a.steps):
            ms = (time.perf_counter() - t0) / (step + 1) * 1e3
            print(f"step {step + 1:4d}/{a.steps}  loss {losses[-1]:.5f}  ({ms:.2f} ms/step, {world} ranks)",
                  flush=True)
    if rank == 0:
        print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f}")
        if a.check:
            print(f"check: the first {min(a.check_steps, a.steps)} steps equal PyTorch's on the whole batch")
    if a.check and not losses[-1] < losses[0]:
        print(f"rank {rank}: the loss did not decrease ({losses[0]} -> {losses[-1]})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
