#!/usr/bin/python3
"""Training a small MLP on a synthetic regression task, each step one compiled
symmflow program per rank: data-parallel (the default) or, with --pipeline, a
1F1B pipeline with one stage per rank.

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- \\
        /usr/bin/python3 examples/train_mlp/train_mlp.py [--steps 300] [--check] [--pipeline]

The task: fit a fixed random "teacher" MLP. Each step has a global batch of
world x --batch samples.

- Data-parallel (sft.DataParallel): every rank holds the whole model and takes
  its part of the global batch; its step is forward, loss, backward, the
  gradients' bucketed all_reduce overlapped with backward, the SGD or Adam
  update in place. Rank 0 prints the progress lines.
- --pipeline (sft.PipelineParallel): the model's --layers linear layers are
  split over the ranks, one stage each; the global batch goes through in
  --micro-batches micro-batches in 1F1B order, activations sent on and their
  gradients sent back with no copy, each stage updating its own parameters in
  place. The last stage prints the progress lines (it has the loss).

--check also trains the whole model in plain PyTorch (one process, no
communication) on the whole global batch for the first --check-steps steps: the
averaged gradients of data parallelism and the micro-batches' summed gradients
of the pipeline are both the whole batch's gradient, so the loss and every
rank's parameters must agree to f32 rounding; it then requires the loss to have
decreased. At the end every rank prints its program's copies.
"""
import argparse
import sys
import time

import torch
import torch.nn.functional as F

import symmflow.torch as sft


def layer_groups(d, hidden, layers, seed):
    """The model as its linear layers, each with the activation after it (GELU and
    ReLU in turn, none after the last): a pipeline stage is a run of them."""
    torch.manual_seed(seed)
    groups = []
    for i in range(layers):
        last = i == layers - 1
        lin = torch.nn.Linear(d if i == 0 else hidden, d if last else hidden)
        groups.append(lin if last else torch.nn.Sequential(lin, torch.nn.GELU() if i % 2 == 0 else torch.nn.ReLU()))
    return groups


def stage(groups, rank, world):
    """Rank `rank`'s run of the layer groups (the first ranks take one more when they do not divide)."""
    per, extra = divmod(len(groups), world)
    start = rank * per + min(rank, extra)
    return torch.nn.Sequential(*groups[start:start + per + (rank < extra)])


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
    ap.add_argument("--layers", type=int, default=None, help="linear layers (default: 3, or the ranks if more, "
                    "with --pipeline)")
    ap.add_argument("--pipeline", action="store_true", help="one stage per rank, micro-batches in 1F1B order")
    ap.add_argument("--micro-batches", type=int, default=4, help="with --pipeline: per global batch")
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd")
    ap.add_argument("--lr", type=float, default=None, help="default: 0.1 (sgd), 0.003 (adam)")
    ap.add_argument("--eager", action="store_true", help="run the step eagerly instead of compiled")
    ap.add_argument("--check", action="store_true", help="compare the first steps with PyTorch")
    ap.add_argument("--check-steps", type=int, default=5)
    ap.add_argument("--every", type=int, default=50, help="print a progress line every N steps")
    a = ap.parse_args()
    lr = a.lr if a.lr is not None else (0.1 if a.optimizer == "sgd" else 0.003)
    momentum = 0.9 if a.optimizer == "sgd" else 0.0

    torch.set_num_threads(1)
    sft.init()
    rank, world = sft.rank(), sft.world_size()
    layers = a.layers or (max(3, world) if a.pipeline else 3)
    if a.pipeline and layers < world:
        ap.error(f"--pipeline: {layers} layers cannot make {world} stages (--layers {world} or more)")
    teacher = torch.nn.Sequential(*layer_groups(a.d, 2 * a.d, 3, seed=123))
    if a.pipeline:
        net = stage(layer_groups(a.d, a.hidden, layers, seed=0), rank, world)
        micro = world * a.batch // a.micro_batches
        trainer = sft.PipelineParallel(net, F.mse_loss, lr=lr, micro_batches=a.micro_batches,
                                       activation_shape=(micro, a.hidden), optimizer=a.optimizer, momentum=momentum,
                                       compile=not a.eager)
        reporter = world - 1  # the stage with the loss
    else:
        net = torch.nn.Sequential(*layer_groups(a.d, a.hidden, layers, seed=0))
        trainer = sft.DataParallel(net, F.mse_loss, lr=lr, optimizer=a.optimizer, momentum=momentum,
                                   compile=not a.eager)
        reporter = 0
    if a.check:
        groups = layer_groups(a.d, a.hidden, layers, seed=0)
        ref = torch.nn.Sequential(*groups)
        ref_mine = stage(groups, rank, world) if a.pipeline else ref  # the layers this rank trains
        opt = torch.optim.SGD(ref.parameters(), lr=lr, momentum=momentum) if a.optimizer == "sgd" else \
            torch.optim.Adam(ref.parameters(), lr=lr)

    losses, staged = [], 0
    t0 = time.perf_counter()
    for step in range(a.steps):
        x, y = global_batch(step, world, a.batch, a.d, teacher)
        if a.pipeline:
            loss = trainer.step(x, y)  # the global batch's mean loss on the last stage, None on the others
        else:
            mine = slice(rank * a.batch, (rank + 1) * a.batch)
            loss = sft.all_reduce(trainer.step(x[mine], y[mine])) / world  # the global batch's mean loss
        if not a.eager and step > 0:  # the runtime's staged copies of this step (step 1 traces)
            staged += (trainer.stats(x, y) if a.pipeline else trainer.stats(x[mine], y[mine]))["copies_staged"]
        if rank == reporter:
            losses.append(float(loss))
        if a.check and step < a.check_steps:
            opt.zero_grad()
            ref_loss = F.mse_loss(ref(x), y)
            ref_loss.backward()
            opt.step()
            if rank == reporter:
                torch.testing.assert_close(loss, ref_loss.detach(), rtol=1e-5, atol=1e-6)
            for p, q in zip(net.parameters(), ref_mine.parameters()):
                torch.testing.assert_close(p.detach(), q.detach(), rtol=1e-5, atol=1e-5)
        if rank == reporter and ((step + 1) % a.every == 0 or step + 1 == a.steps):
            ms = (time.perf_counter() - t0) / (step + 1) * 1e3
            how = f"{world} stages, {a.micro_batches} micro-batches" if a.pipeline else f"{world} ranks"
            print(f"step {step + 1:4d}/{a.steps}  loss {losses[-1]:.5f}  ({ms:.2f} ms/step, {how})", flush=True)
    if not a.eager:
        # The program's planned copies, and the runtime's staged copies (a message
        # that took the staged path instead of moving straight into its receiver's
        # symmetric buffer) over the compiled steps.
        args = (x, y) if a.pipeline else (x[mine], y[mine])
        print(f"rank {rank}: {trainer.explain(*args).splitlines()[0].split(': ', 1)[1]}; staged copies in steps "
              f"2-{a.steps}: {staged}", flush=True)
    if rank == reporter:
        print(f"loss {losses[0]:.5f} -> {losses[-1]:.5f}")
        if a.check:
            print(f"check: the first {min(a.check_steps, a.steps)} steps equal PyTorch's on the whole batch")
        if a.check and not losses[-1] < losses[0]:
            print(f"rank {rank}: the loss did not decrease ({losses[0]} -> {losses[-1]})", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
