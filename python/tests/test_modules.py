"""Real PyTorch modules split across ranks, compiled by symmflow. Each is checked
three ways (conftest.check_three_ways): against itself run eagerly, against
PyTorch on the unsharded problem, and bitwise against symmflow's eager run of
the traced .sf."""
import math

import os
import subprocess

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import symmflow.torch as sft
from conftest import bitwise_equal, check_three_ways, randn


class MegatronMLP(nn.Module):
    """Column-parallel fc1 (this rank's slice of the hidden units), GELU, row-parallel
    fc2, then an all_reduce of the partial sums (Megatron-LM's MLP)."""

    def __init__(self, d, hidden, rank, world, seed=1):
        super().__init__()
        h = hidden // world
        full1, full2 = randn(hidden, d, seed=seed), randn(d, hidden, seed=seed + 1)
        self.fc1 = nn.Linear(d, h)
        self.fc2 = nn.Linear(h, d, bias=False)
        with torch.no_grad():
            self.fc1.weight.copy_(full1[rank * h:(rank + 1) * h])
            self.fc1.bias.copy_(randn(hidden, seed=seed + 2)[rank * h:(rank + 1) * h])
            self.fc2.weight.copy_(full2[:, rank * h:(rank + 1) * h])
        self.full = (full1, randn(hidden, seed=seed + 2), full2)

    def forward(self, x):
        y = self.fc2(F.gelu(self.fc1(x), approximate="tanh"))
        sft.all_reduce_(y)
        return y + x  # residual

    def reference(self, x):
        w1, b1, w2 = self.full
        return F.gelu(x @ w1.t() + b1, approximate="tanh") @ w2.t() + x


def test_megatron_mlp_block(rank, world):
    m = MegatronMLP(16, 8 * world, rank, world).eval()
    x = randn(6, 16, seed=5)
    fast = sft.compile(m)
    out = check_three_ways(fast, m, [x], reference=m.reference(x), atol=1e-4, rtol=1e-4)
    assert out.shape == (6, 16)
    head = fast.explain(x).splitlines()[0]
    assert head.endswith("0 copies (0 bytes)"), head  # fc2 writes the arena, the residual add a regular buffer
    assert fast.stats(x)["copies"] == 0


def causal_attention(q, k, v):
    T = q.shape[-2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1) @ v


class ParallelAttention(nn.Module):
    """Heads split across ranks (Megatron): q/k/v projections of this rank's heads,
    causal attention, the row-parallel output projection, an all_reduce."""

    def __init__(self, d, heads, rank, world, seed=20):
        super().__init__()
        self.hl = heads // world
        self.dh = d // heads
        cols = slice(rank * self.hl * self.dh, (rank + 1) * self.hl * self.dh)
        self.full = [randn(d, d, seed=seed + i) for i in range(4)]
        self.q, self.k, self.v = (nn.Linear(d, self.hl * self.dh, bias=False) for _ in range(3))
        self.o = nn.Linear(self.hl * self.dh, d, bias=False)
        with torch.no_grad():
            for lin, w in zip((self.q, self.k, self.v), self.full[:3]):
                lin.weight.copy_(w[cols])
            self.o.weight.copy_(self.full[3][:, cols])
        self.heads = heads

    def split(self, t, h):
        B, T, _ = t.shape
        return t.view(B, T, h, self.dh).transpose(1, 2)

    def forward(self, x):
        B, T, _ = x.shape
        a = causal_attention(self.split(self.q(x), self.hl), self.split(self.k(x), self.hl),
                             self.split(self.v(x), self.hl))
        y = self.o(a.transpose(1, 2).reshape(B, T, self.hl * self.dh))
        return sft.all_reduce_(y)

    def reference(self, x):
        B, T, d = x.shape
        wq, wk, wv, wo = self.full
        a = causal_attention(self.split(x @ wq.t(), self.heads), self.split(x @ wk.t(), self.heads),
                             self.split(x @ wv.t(), self.heads))
        return a.transpose(1, 2).reshape(B, T, d) @ wo.t()


def test_attention_block_heads_split_across_ranks(rank, world):
    heads = 2 * world
    m = ParallelAttention(8 * heads, heads, rank, world).eval()
    x = randn(2, 6, 8 * heads, seed=7)
    check_three_ways(sft.compile(m), m, [x], reference=m.reference(x), atol=1e-4, rtol=1e-4)


class SequenceParallelBlock(nn.Module):
    """Sequence parallel (Megatron-SP): the sequence is split across ranks;
    all_gather it, layer_norm, a tensor-parallel MLP, reduce_scatter back."""

    def __init__(self, d, hidden, rank, world):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        with torch.no_grad():
            self.ln.weight.copy_(1 + 0.1 * randn(d, seed=31))
            self.ln.bias.copy_(0.1 * randn(d, seed=32))
        self.mlp = MegatronMLP(d, hidden, rank, world, seed=40)

    def forward(self, x_shard):
        x = sft.all_gather(x_shard)
        h = self.ln(x)
        y = self.mlp.fc2(F.gelu(self.mlp.fc1(h)))
        return sft.reduce_scatter(y) + x_shard

    def reference(self, x_full):
        w1, b1, w2 = self.mlp.full
        h = F.layer_norm(x_full, x_full.shape[-1:], self.ln.weight.detach(), self.ln.bias.detach())
        return F.gelu(h @ w1.t() + b1) @ w2.t() + x_full


def test_sequence_parallel_block(rank, world):
    m = SequenceParallelBlock(16, 8 * world, rank, world).eval()
    x_full = randn(4 * world, 16, seed=9)
    x = x_full.chunk(world)[rank].clone()
    ref = m.reference(x_full).chunk(world)[rank]
    check_three_ways(sft.compile(m), m, [x], reference=ref, atol=1e-4, rtol=1e-4)


def ring_attention(q, k, v):
    """Each rank holds one block of the sequence; K/V blocks travel around the ring
    in double buffers (a Python loop over the ring), combined with an online softmax
    (non-causal)."""
    world, rank = sft.world_size(), sft.rank()
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    scale = 1.0 / math.sqrt(q.shape[-1])
    kv = [torch.stack([k, v]), torch.empty(2, *k.shape)]
    m = torch.full(q.shape[:-1] + (1,), float("-inf"))
    l = torch.zeros(q.shape[:-1] + (1,))
    acc = torch.zeros_like(q)
    for step in range(world):
        cur, nxt_buf = kv[step % 2], kv[(step + 1) % 2]
        works = []
        if step + 1 < world:
            works = sft.batch_isend_irecv([sft.P2POp("isend", cur, nxt), sft.P2POp("irecv", nxt_buf, prv)])
        s = q @ cur[0].transpose(-2, -1) * scale
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        corr = torch.exp(m - m_new)
        l = l * corr + p.sum(-1, keepdim=True)
        acc = acc * corr + p @ cur[1]
        m = m_new
        for w in works:
            w.wait()
    return acc / l


def test_ring_attention_python_loop_over_the_ring(rank, world):
    T, dh = 4, 8
    qf, kf, vf = (randn(world * T, dh, seed=50 + i) for i in range(3))
    q, k, v = (t[rank * T:(rank + 1) * T].clone() for t in (qf, kf, vf))
    ref = (torch.softmax(qf @ kf.t() / math.sqrt(dh), dim=-1) @ vf)[rank * T:(rank + 1) * T]
    check_three_ways(sft.compile(ring_attention), ring_attention, [q, k, v], reference=ref, atol=1e-5, rtol=1e-4)


def halo_step(grid):
    """grid: this rank's rows plus one halo row above and below (periodic). Sends its
    edge rows (slices of the input) and receives into the halo rows (slices of the
    input, written in place), then one Jacobi step on the interior."""
    world, rank = sft.world_size(), sft.rank()
    up, down = (rank - 1) % world, (rank + 1) % world
    n = grid.shape[0] - 2
    works = sft.batch_isend_irecv([
        sft.P2POp("isend", grid[1], up, tag=1), sft.P2POp("isend", grid[n], down, tag=2),
        sft.P2POp("irecv", grid[n + 1], down, tag=1), sft.P2POp("irecv", grid[0], up, tag=2)])
    for w in works:
        w.wait()
    return 0.25 * (grid[:-2] + grid[2:]) + 0.5 * grid[1:-1]


def test_halo_exchange_sends_from_and_receives_into_slices_of_an_input(rank, world):
    n, cols = 3, 5
    full = randn(world * n, cols, seed=60)
    mine = lambda: torch.cat([full[(rank * n - 1) % (world * n)][None], full[rank * n:(rank + 1) * n],
                              full[((rank + 1) * n) % (world * n)][None]])
    g_eager, g_fast = mine(), mine()
    g_eager[0].zero_(), g_eager[n + 1].zero_(), g_fast[0].zero_(), g_fast[n + 1].zero_()
    fast = sft.compile(halo_step)
    eager = halo_step(g_eager)
    out = fast(g_fast)
    torch.testing.assert_close(out, eager)
    assert bitwise_equal(g_fast, mine()), "the halo rows were received into the caller's grid"
    up, down = torch.roll(full, 1, 0), torch.roll(full, -1, 0)
    ref = (0.25 * (up + down) + 0.5 * full)[rank * n:(rank + 1) * n]
    torch.testing.assert_close(out, ref)
    g_ref = mine()
    g_ref[0].zero_(), g_ref[n + 1].zero_()
    assert bitwise_equal(fast.run_eager_sf(g_ref), out)


def test_halo_exchange_on_a_symmetric_grid_is_used_in_place(rank, world):
    # The caller's grid from sft.empty is used in place, as the receive buffer of
    # the halo rows and the send buffer of the edge rows: nothing is copied in or
    # back, no clone, and nothing is staged (the ranks exchange their transfers
    # at load, so each send waits for its receive's post: exec/rendezvous_sends.h).
    n, cols = 3, 5
    full = randn(world * n, cols, seed=62)
    rows = torch.cat([torch.zeros(1, cols), full[rank * n:(rank + 1) * n], torch.zeros(1, cols)])
    g_fast = sft.empty((n + 2, cols))
    g_fast.copy_(rows)
    g_eager = rows.clone()
    fast = sft.compile(halo_step)
    out = fast(g_fast)
    torch.testing.assert_close(out, halo_step(g_eager))
    assert bitwise_equal(g_fast, g_eager), "the halo rows were received into the caller's grid"
    out = fast(g_fast)  # a second run: the copies of one run are counted
    stats = fast.stats(g_fast)
    assert stats["copies_inputs_to_symmetric"] == 0 and stats["copies_reinplace"] == 0, stats
    assert stats["copies"] == 0, stats


def all_reduce_input_in_place(x):
    sft.all_reduce_(x)
    return x * 2


def test_a_symmetric_input_is_compared_across_ranks_once_not_every_run(rank, world):
    # Used in place by the all_reduce, so it must sit at the same offset on every
    # rank: the ranks compare that when the signature changes, not every run.
    x = sft.empty((64,))
    x.copy_(randn(64, seed=90 + rank))
    want = sum(randn(64, seed=90 + r) for r in range(world))
    fast = sft.compile(all_reduce_input_in_place)
    torch.testing.assert_close(fast(x), want * 2)
    for _ in range(2):
        fast(x)
    stats = fast.stats(x)
    assert stats["copies"] == 0 and stats["input_offset_checks"] == (1 if world > 1 else 0), stats


def seed_op_on_matmul(x, w):
    y = torch.ops.symm_mem.multimem_all_reduce_(x @ w, "sum", "world")
    return torch.relu(y) * 2


def test_seed_symm_mem_op_on_a_matmul_output_costs_no_copy(rank, world):
    x, w = randn(8, 16, seed=70 + rank), randn(16, 8, seed=80)
    ref = torch.relu(sum(randn(8, 16, seed=70 + r) for r in range(world)) @ w) * 2
    fast = sft.compile(seed_op_on_matmul)
    check_three_ways(fast, seed_op_on_matmul, [x, w], reference=ref, atol=1e-4, rtol=1e-4)
    assert "produced by aten::mm, which writes straight into the symmetric arena" in fast.explain(x, w)
    head = fast.explain(x, w).splitlines()[0]
    assert head.endswith("0 copies (0 bytes)"), head  # the returned relu * 2 is written outside the arena
    assert fast.stats(x, w)["copies"] == 0


def pipeline(x, w1, w2):
    """Two stages (more with more ranks): rank r applies stage r to what rank r-1
    sent and passes it on; the last rank returns the result, the others what they sent."""
    rank, world = sft.rank(), sft.world_size()
    ws = [w1, w2]
    if rank == 0:
        h = torch.relu(x @ ws[0])
    else:
        h = torch.empty(x.shape[0], w1.shape[1])
        sft.batch_isend_irecv([sft.P2POp("irecv", h, rank - 1)])[0].wait()
        h = torch.relu(h @ ws[rank % 2])
    if rank + 1 < world:
        sft.batch_isend_irecv([sft.P2POp("isend", h, rank + 1)])[0].wait()
    return h


def test_pipeline_stages_eagerly(rank, world):
    x, w1, w2 = randn(4, 8, seed=90), randn(8, 8, seed=91), randn(8, 8, seed=92)
    h = torch.relu(x @ w1)
    for r in range(1, rank + 1):
        h = torch.relu(h @ (w1, w2)[r % 2])
    torch.testing.assert_close(pipeline(x, w1, w2), h)


def test_pipeline_stages_compiled(rank, world):
    if world == 1:
        pytest.skip("a pipeline needs two ranks")
    x, w1, w2 = randn(4, 8, seed=90), randn(8, 8, seed=91), randn(8, 8, seed=92)
    fast = sft.compile(pipeline)
    # The ranks trace different programs (issue 17): they agree on one symmetric layout.
    out = fast(x, w1, w2)
    torch.testing.assert_close(out, pipeline(x, w1, w2))


def test_pipeline_stages_export_one_graph_per_rank_that_symmflow_run_checks(rank, world):
    if world == 1:
        pytest.skip("a pipeline needs two ranks")
    path = os.path.join(os.environ.get("SF_PY_TEST_TMP", "/tmp"), f"sf_pipeline.w{world}.sf")
    x, w1, w2 = randn(4, 8, seed=90), randn(8, 8, seed=91), randn(8, 8, seed=92)
    text = sft.export(pipeline, (x, w1, w2), path)
    for r in range(world):
        assert f" ranks {r} (" in text, text
    if rank == 0:
        exe = os.environ.get("SYMMFLOW_CLI", "symmflow")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYMMFLOW_") or k == "SYMMFLOW_VERIFY"}
        r = subprocess.run([exe, "run", path, "--nproc", str(world), "--check"], env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "check: OK" in r.stdout
    sft.all_reduce(torch.zeros(1))  # every rank waits for rank 0's run
