"""The same PyTorch functions run as PyTorch eager with torch.distributed (gloo)
and as sft.compile, side by side in one job (docs/performance.md "From PyTorch").

    PYTHONPATH=build/dev/python build/dev/symmflow launch --nproc 2 -- \\
        /usr/bin/python3 bench/torch_vs_symmflow.py [--trials 7] [--iters 20] [--json out.json]

Workloads (per rank, 2 ranks), the flagship examples at two sizes each:
  tp_mlp/B      x[B, 256] -> fc1 (256 -> 512, this rank's shard) -> GELU -> fc2 (512 -> 256) -> all_reduce
                (B = 64, 512; examples/tp_mlp)
  tp_block      T=256, d=512, 8 heads split across ranks: layer norm, causal attention, all_reduce,
                residual, layer norm, MLP (4d, split), all_reduce, residual
  halo2d/N      4 Jacobi steps of a 5-point stencil on an N x N strip per rank with one halo
                row above and below, the halo rows exchanged by batch_isend_irecv on slices of
                the grids while the interior is computed (N = 256, 512; examples/halo2d)
  ring_attn/T   ring attention, T tokens per rank, head dim 64: the K/V blocks go around the
                ring (double buffers) into an online softmax (T = 256, 1024; examples/ring_attention)
  tiny          x[4] + 1: what one call of a compiled function costs over its program's own run
The compiled variant of halo2d and ring_attn gets its grids and receive buffers
from sft.empty (symmetric, used in place: 0 copies), as a user of symmflow would
allocate them; PyTorch's get regular tensors.

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


def gloo_p2p(ops):
    """[(op, tensor, peer, tag)] through torch.distributed (gloo): the Works."""
    kind = {"isend": dist.isend, "irecv": dist.irecv}
    return dist.batch_isend_irecv([dist.P2POp(kind[o], t, peer, tag=tag) for o, t, peer, tag in ops])


def sf_p2p(ops):
    return sft.batch_isend_irecv([sft.P2POp(o, t, peer, tag=tag) for o, t, peer, tag in ops])


def halo2d_fn(p2p, steps=4):
    """examples/halo2d's program: u and v are [N + 2, N] (a halo row above and below);
    u -> v -> u -> ... for `steps` steps; returns the heat of each step."""
    def stencil(src, dst, r0, r1):
        c = src[r0:r1, 1:-1]
        lap = (src[r0 - 1:r1 - 1, 1:-1] + src[r0 + 1:r1 + 1, 1:-1]) + (src[r0:r1, :-2] + src[r0:r1, 2:]) - c * 4.0
        dst[r0:r1, 1:-1] = c + lap * 0.2

    def f(u, v):
        rank, world = sft.rank(), sft.world_size()
        prev, nxt = (rank - 1 + world) % world, (rank + 1) % world
        h = u.shape[0] - 2
        v[:, :1] = u[:, :1]
        v[:, -1:] = u[:, -1:]
        heats = []
        for step in range(steps):
            src, dst = (u, v) if step % 2 == 0 else (v, u)
            works = p2p([("isend", src[1], prev, 0), ("isend", src[h], nxt, 1),
                         ("irecv", src[0], prev, 1), ("irecv", src[h + 1], nxt, 0)])
            stencil(src, dst, 2, h)  # no halo needed: while the rows are in flight
            for w in works:
                w.wait()
            stencil(src, dst, 1, 2)
            stencil(src, dst, h, h + 1)
            heats.append(dst[1:h + 1, 1:-1].sum())
        return torch.stack(heats)
    return f


def ring_attn_fn(p2p):
    """examples/ring_attention's program: softmax(Q K^T / sqrt(d)) V over the ring's
    whole sequence; kb0, vb0, kb1, vb1 are the double buffers the blocks arrive in."""
    def f(q, k, v, kb0, vb0, kb1, vb1):
        rank, world = sft.rank(), sft.world_size()
        prev, nxt = (rank - 1 + world) % world, (rank + 1) % world
        t, d = q.shape
        bufs = [(kb0, vb0), (kb1, vb1)]
        m = torch.full((t, 1), float("-inf"))
        l, acc = torch.zeros(t, 1), torch.zeros(t, d)
        cur_k, cur_v = k, v
        for s in range(world):
            works = []
            if s + 1 < world:
                nk, nv = bufs[s % 2]
                works = p2p([("isend", cur_k, nxt, 0), ("isend", cur_v, nxt, 1),
                             ("irecv", nk, prev, 0), ("irecv", nv, prev, 1)])
            sc = (q @ cur_k.t()) * (1.0 / math.sqrt(d))
            m_new = torch.maximum(m, sc.amax(-1, keepdim=True))
            p = torch.exp(sc - m_new)
            alpha = torch.exp(m - m_new)
            l = l * alpha + p.sum(-1, keepdim=True)
            acc = acc * alpha + p @ cur_v
            m = m_new
            for w in works:
                w.wait()
            if s + 1 < world:
                cur_k, cur_v = nk, nv
        return acc / l
    return f


def symmetric_copies(args):
    out = []
    for a in args:
        s = sft.empty(tuple(a.shape), dtype=a.dtype)
        s.copy_(a)
        out.append(s)
    return out


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

    # name: (torch function, torch + symmflow comm function, args, whether the
    # compiled variant gets symmetric copies of the args)
    work = {}
    hid = 512
    for rows in (64, 512):
        mlp_args = [r(rows, 256), r(hid, 256), r(hid), r(256, hid)]
        work[f"tp_mlp/{rows}"] = (tp_mlp_fn(gloo), tp_mlp_fn(sfar), mlp_args, False)
    T, d, H = 256, 512, 8
    hl, dh = H // world, d // H
    blk_args = [r(T, d), 1 + r(d), r(d), r(hl * dh, d), r(hl * dh, d), r(hl * dh, d), r(d, hl * dh),
                1 + r(d), r(d), r(4 * d // world, d), r(4 * d // world), r(d, 4 * d // world)]
    work["tp_block"] = (tp_block_fn(gloo, hl, dh), tp_block_fn(sfar, hl, dh), blk_args, False)
    for n in (256, 512):
        work[f"halo2d/{n}"] = (halo2d_fn(gloo_p2p), halo2d_fn(sf_p2p), [r(n + 2, n), torch.zeros(n + 2, n)], True)
    for t in (256, 1024):
        qkv = [r(t, 64) * 20 for _ in range(3)]
        work[f"ring_attn/{t}"] = (ring_attn_fn(gloo_p2p), ring_attn_fn(sf_p2p),
                                  qkv + [torch.zeros(t, 64) for _ in range(4)], True)

    results = []
    for name, (f_torch, f_sf, args, symmetric) in work.items():
        if a.only and name.split("/")[0] not in a.only.split(","):
            continue
        # The same start for the check: a workload may write its inputs (halo2d's grids).
        sf_args = symmetric_copies(args) if symmetric else [x.clone() for x in args]
        fast = sft.compile(f_sf, name=name.replace("/", "_"))
        ref = f_torch(*[x.clone() for x in args])
        torch.testing.assert_close(fast(*sf_args), ref, atol=1e-3, rtol=1e-3)
        times = {"torch": [], "torch+sf": [], "compiled": []}
        for _ in range(a.trials):
            times["torch"].append(timed(f_torch, args, a.iters, barrier))
            times["torch+sf"].append(timed(f_sf, args, a.iters, barrier))
            times["compiled"].append(timed(fast, sf_args, a.iters, barrier))
        med = {k: statistics.median(v) for k, v in times.items()}
        # the last run's copies, as the arguments were passed (explain's header
        # assumes regular ones)
        stats = fast.stats(*sf_args)
        results.append({"workload": name, "nproc": world, **{f"{k}_us": v for k, v in med.items()},
                        "compiled_over_torch": med["compiled"] / med["torch"],
                        "copies": f"{stats['copies']} copies ({stats['copy_bytes']} bytes)"})

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
        print(f"{'workload':14} {'torch (gloo) us':>16} {'torch+sf comm us':>17} {'compiled us':>12} "
              f"{'compiled/torch':>15}  copies")
        for res in results:
            if res["workload"] == "tiny":
                continue
            print(f"{res['workload']:14} {res['torch_us']:16.0f} {res['torch+sf_us']:17.0f} "
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
