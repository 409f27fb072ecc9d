#!/usr/bin/python3
"""Pipeline training of an MLP on a synthetic regression task: one stage per
rank, micro-batches in 1F1B order, each step one compiled symmflow program per
rank (its forwards and backwards, activations sent on and their gradients sent
back with no copy, the SGD or Adam update of the stage's parameters in place).

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 4 -- \\
        /usr/bin/python3 examples/train_pipeline/train_pipeline.py [--steps 300] [--check]

The task: fit a fixed random "teacher" MLP. Stage 0 is Linear + GELU from the
input, the middle stages Linear + ReLU, the last stage a Linear to the output and
the loss; every rank builds the whole model from one seed and keeps its stage.
The last stage prints the progress lines (it has the loss). --check also trains
the whole model in plain PyTorch (one process, no pipeline) on the whole batch
for the first --check-steps steps: each stage's parameters must agree with the
same layers there to f32 rounding (the pipeline sums the micro-batches'
gradients in turn); the loss is then required to have decreased.
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

import symmflow.torch as sft


def stages(world, d, hidden, seed):
    """The whole model, one nn.Sequential per stage."""
    torch.manual_seed(seed)
    if world == 1:
        return [torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, d))]
    out = [torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.GELU())]
    out += [torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.ReLU()) for _ in range(world - 2)]
    return out + [torch.nn.Sequential(torch.nn.Linear(hidden, d))]


def teacher(d, seed=123):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.Tanh(), torch.nn.Linear(2 * d, d))


def batch(step, n, d, net):
    g = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(n, d, generator=g)
    with torch.no_grad():
        return x, net(x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--micro-batches", type=int, default=4)
    ap.add_argument("--micro-batch", type=int, default=16, help="samples per micro-batch")
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    ap.add_argument("--lr", type=float, default=None, help="default: 0.05 (sgd), 0.003 (adam)")
    ap.add_argument("--eager", action="store_true", help="run the step eagerly instead of compiled")
    ap.add_argument("--check", action="store_true", help="compare the first steps with PyTorch")
    ap.add_argument("--check-steps", type=int, default=5)
    ap.add_argument("--every", type=int, default=50, help="print a progress line every N steps")
    a = ap.parse_args()
    lr = a.lr if a.lr is not None else (0.05 if a.optimizer == "sgd" else 0.003)
    momentum = 0.9 if a.optimizer == "sgd" else 0.0

    torch.set_num_threads(1)
    sft.init()
    rank, world = sft.rank(), sft.world_size()
    last = rank == world - 1
    net = teacher(a.d)
    mine = stages(world, a.d, a.hidden, seed=0)[rank]
    pp = sft.PipelineParallel(mine, F.mse_loss, lr=lr, micro_batches=a.micro_batches,
                              activation_shape=(a.micro_batch, a.hidden), optimizer=a.optimizer, momentum=momentum,
                              compile=not a.eager)
    if a.check:
        ref = torch.nn.Sequential(*stages(world, a.d, a.hidden, seed=0))
        opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=momentum) if a.optimizer == "sgd" else \
            torch.optim.Adam(ref.parameters(), lr=lr)

    losses, staged = [], 0
    t0 = time.perf_counter()
    for step in range(a.steps):
        x, y = batch(step, a.micro_batches * a.micro_batch, a.d, net)
        loss = pp.step(x, y)  # the batch's loss on the last stage, None on the others
        if not a.eager and step > 0:  # the runtime's staged copies of this step (the first one traced)
            staged += pp.stats(x, y)["copies_staged"]
        if last:
            losses.append(float(loss))
        if a.check and step < a.check_steps:
            opt.zero_grad()
            ref_loss = F.mse_loss(ref(x), y)
            ref_loss.backward()
            opt.step()
            if last:
                torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-5, atol=1e-6)
            for p, q in zip(mine.parameters(), ref[rank].parameters()):
                torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=1e-5)
        if last and ((step + 1) % a.every == 0 or step + 1 == a.steps):
            ms = (time.perf_counter() - t0) / (step + 1) * 1e3
            print(f"step {step + 1:4d}/{a.steps}  loss {losses[-1]:.5f}  ({ms:.2f} ms/step, {world} stages, "
                  f"{a.micro_batches} micro-batches)", flush=True)
    if not a.eager:
        # Every rank's copies: the program's planned ones, and the runtime's staged
        # copies (an activation or gradient that took the staged path instead of
        # moving straight into its receiver's symmetric buffer) over the compiled steps.
        print(f"rank {rank}: {pp.explain(x, y).splitlines()[0].split(': ', 1)[1]}; staged copies in steps "
              f"2-{a.steps}: {staged}", flush=True)
    if last:
        print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f}")
        if a.check:
            print(f"check: the first {min(a.check_steps, a.steps)} steps equal PyTorch's on the whole model")
        if a.check and not losses[-1] < losses[0]:
            print(f"rank {rank}: the loss did not decrease ({losses[0]} -> {losses[-1]})", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
