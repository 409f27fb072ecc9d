"""Backward through communication (DESIGN.md section 9, "Autograd"): every
communication op's gradient against the unsharded computation (the loss being
the sum of the ranks' losses), eagerly and compiled (torch.autograd.grad inside
the compiled function: one program with the backward's communication)."""
import math
import re

import pytest
import torch

import symmflow.torch as sft
from conftest import bitwise_equal, randn


def weights(world, shape, seed):
    """c_r for every rank r: rank r's loss is sum(c_r * its output)."""
    return [randn(*shape, seed=seed + r) for r in range(world)]


def grad_of(fn, x, c):
    """d(sum(c * fn(x)))/dx on this rank, as the function a training step would run."""
    x = x.detach().requires_grad_()
    out = fn(x)
    return torch.autograd.grad((out * c).sum(), [x])[0]


def all_reduce_fn(x):
    return sft.all_reduce(x)


def all_reduce_in_place_fn(x):
    y = x * 1.0  # a non-leaf: in place on it is differentiable
    return sft.all_reduce_(y)


def all_reduce_avg_fn(x):
    return sft.all_reduce(x, op="avg")


def all_gather_fn(x):
    return sft.all_gather(x)


def reduce_scatter_fn(x):
    return sft.reduce_scatter(x)


def all_to_all_fn(x):
    return sft.all_to_all(x)


def broadcast_fn(x):
    y = x * 1.0
    return sft.broadcast_(y, src=sft.world_size() - 1)


def expected_grad(name, rank, world, c):
    """The unsharded gradient of sum_r sum(c_r * out_r) with respect to this rank's input."""
    total = sum(c)
    if name in ("all_reduce", "all_reduce_"):
        return total
    if name == "all_reduce_avg":
        return total / world
    if name == "all_gather":
        return total.chunk(world)[rank]
    if name == "reduce_scatter":
        return torch.cat(c)
    if name == "all_to_all":
        return torch.cat([c[s].chunk(world)[rank] for s in range(world)])
    if name == "broadcast_":
        return total if rank == world - 1 else torch.zeros_like(total)
    raise KeyError(name)


# (name, function, input rows per rank, output rows per rank)
CASES = [("all_reduce", all_reduce_fn, 4, lambda w: 4), ("all_reduce_", all_reduce_in_place_fn, 4, lambda w: 4),
         ("all_reduce_avg", all_reduce_avg_fn, 4, lambda w: 4), ("all_gather", all_gather_fn, 2, lambda w: 2 * w),
         ("reduce_scatter", reduce_scatter_fn, None, lambda w: 2), ("all_to_all", all_to_all_fn, None, lambda w: None),
         ("broadcast_", broadcast_fn, 3, lambda w: 3)]


def case_shapes(name, rows_in, rows_out, world):
    if name == "reduce_scatter":
        return (2 * world, 3), (2, 3)
    if name == "all_to_all":
        return (2 * world, 3), (2 * world, 3)
    return (rows_in, 3), (rows_out(world), 3)


@pytest.mark.parametrize("name,fn,rows_in,rows_out", CASES, ids=[c[0] for c in CASES])
def test_gradient_of_each_collective_equals_the_unsharded_gradient(name, fn, rows_in, rows_out, rank, world):
    shape_in, shape_out = case_shapes(name, rows_in, rows_out, world)
    x = randn(*shape_in, seed=200 + rank)
    c = weights(world, shape_out, seed=300)
    want = expected_grad(name, rank, world, c)
    eager = grad_of(fn, x, c[rank])
    torch.testing.assert_close(eager, want, atol=1e-5, rtol=1e-5)
    step = sft.compile(lambda x, c: grad_of(fn, x, c), name=f"grad_{name}".rstrip("_"))
    compiled = step(x, c[rank])
    torch.testing.assert_close(compiled, want, atol=1e-5, rtol=1e-5)
    assert bitwise_equal(step.run_eager_sf(x, c[rank]), compiled)
    # the backward's communication is in the one traced program: two collectives
    assert len(re.findall(r"c10d::(?!wait_tensor)", step.sf_text(x, c[rank]))) == 2


def test_max_all_reduce_has_no_gradient_and_says_so(rank, world):
    x = randn(4, seed=1).requires_grad_()
    y = sft.all_reduce(x, op="max")
    with pytest.raises(sft.Error, match=r"all_reduce: the backward of a 'max' reduction is not defined"):
        torch.autograd.grad(y.sum(), [x])


def test_without_gradients_a_collective_traces_no_backward(rank, world):
    def f(x):
        return sft.all_reduce(x) * 2

    text = sft.compile(f).sf_text(randn(4))
    assert text.count("c10d::all_reduce(") == 1


def two_stage(w, x, c, buf):
    """Rank 0: h = x * w, sent to rank 1 (the send's token is rank 0's objective).
    Rank 1: receives h, loss = sum(c * h**2). Returns d(loss)/dw on rank 0 and the
    loss on rank 1; the other ranks take no part in the pipeline (but compile too:
    compiling is collective)."""
    if sft.rank() == 0:
        token = sft.send(x * w, 1)
        return torch.autograd.grad(token, [w])[0]
    if sft.rank() > 1:
        return x * 2
    h = sft.recv(buf, 0)
    loss = (c * h * h).sum()
    torch.autograd.grad(loss, [buf])  # buf's gradient is zero; it makes autograd run the receive's backward
    return loss.detach()


def test_send_backward_is_the_matching_receive(rank, world):
    if world == 1:
        pytest.skip("a send needs two ranks")
    w, x, c = randn(5, seed=10).requires_grad_(), randn(5, seed=11), randn(5, seed=12)
    buf = torch.zeros(5, requires_grad=True)
    eager = two_stage(w, x, c, buf)
    fast = sft.compile(two_stage)
    compiled = fast(w, x, c, buf)
    torch.testing.assert_close(compiled, eager)
    if rank == 0:
        torch.testing.assert_close(eager, 2 * c * (x * w.detach()) * x)  # d/dw sum(c (x w)^2)
        assert "c10d::irecv_" in fast.sf_text(w, x, c, buf)  # the send's backward, compiled
    if rank == 1:
        assert "c10d::isend" in fast.sf_text(w, x, c, buf)  # the receive's backward, compiled


def ring_attention_grads(q, k, v, c):
    """Ring attention (non-causal, online softmax; test_modules.ring_attention)
    differentiated: d sum(c * out) / d (q, k, v). K and V move around the ring
    with batch_isend_irecv's Work API, each step into fresh buffers (the double
    buffer of the forward-only version would overwrite K/V that backward reads)."""
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    world, rank = sft.world_size(), sft.rank()
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    scale = 1.0 / math.sqrt(q.shape[-1])
    m = torch.full(q.shape[:-1] + (1,), float("-inf"))
    l = torch.zeros(q.shape[:-1] + (1,))
    acc = torch.zeros_like(q)
    ck, cv = k, v
    for step in range(world):
        works = []
        if step + 1 < world:
            nk, nv = torch.empty_like(ck), torch.empty_like(cv)
            works = sft.batch_isend_irecv([sft.P2POp("isend", ck, nxt, tag=0), sft.P2POp("isend", cv, nxt, tag=1),
                                           sft.P2POp("irecv", nk, prv, tag=0), sft.P2POp("irecv", nv, prv, tag=1)])
        s = q @ ck.transpose(-2, -1) * scale
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        p = torch.exp(s - m_new)
        corr = torch.exp(m - m_new)
        l = l * corr + p.sum(-1, keepdim=True)
        acc = acc * corr + p @ cv
        m = m_new
        for w in works:
            w.wait()
        if works:
            ck, cv = nk, nv
    return torch.autograd.grad(((acc / l) * c).sum(), [q, k, v])


def test_ring_attention_gradients_through_batch_isend_irecv_equal_the_unsharded_attentions(rank, world):
    T, dh = 4, 8
    qf, kf, vf = (randn(world * T, dh, seed=80 + i) for i in range(3))
    cs = weights(world, (T, dh), 90)
    mine = slice(rank * T, (rank + 1) * T)
    q, k, v = (t[mine].clone() for t in (qf, kf, vf))
    leaves = [t.clone().requires_grad_() for t in (qf, kf, vf)]
    out = torch.softmax(leaves[0] @ leaves[1].t() / math.sqrt(dh), dim=-1) @ leaves[2]
    ref = [g[mine] for g in torch.autograd.grad((out * torch.cat(cs)).sum(), leaves)]
    eager = ring_attention_grads(q, k, v, cs[rank])
    fast = sft.compile(ring_attention_grads)
    compiled = fast(q, k, v, cs[rank])
    sf_eager = fast.run_eager_sf(q, k, v, cs[rank])
    for e, got, s, r in zip(eager, compiled, sf_eager, ref):
        assert bitwise_equal(s, got)
        torch.testing.assert_close(e, r, atol=1e-5, rtol=1e-4)  # online softmax: another summation order
        torch.testing.assert_close(got, r, atol=1e-5, rtol=1e-4)
    # each rotation's backward is the batch reversed: world - 1 batches each way
    assert fast.sf_text(q, k, v, cs[rank]).count("c10d::batch_isend_irecv(") == 2 * (world - 1)
    head = fast.explain(q, k, v, cs[rank]).splitlines()[0]
    assert head.endswith(" 0 copies (0 bytes)"), head  # K/V and their gradients received where they are used
