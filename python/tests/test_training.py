"""Training through communication: the gradients of the bridge's tensor-parallel
modules (test_modules.py) against PyTorch's on the unsharded model, eagerly and
compiled (torch.autograd.grad inside sft.compile: forward, backward and their
communication in one program), and a compiled SGD step that updates the caller's
parameters in place."""
import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils.stateless import functional_call

import symmflow.torch as sft
from conftest import bitwise_equal, randn, reference_step, torch_distributed, torch_optimizer
from test_modules import MegatronMLP, ParallelAttention, SequenceParallelBlock, causal_attention


def grads_step(m):
    """step(params, x, c) = d sum(c * m(x)) / d params, m's parameters given as a list."""
    names = [n for n, _ in m.named_parameters()]

    def step(params, x, c):
        out = functional_call(m, dict(zip(names, params)), (x,))
        return torch.autograd.grad((out * c).sum(), params)
    return step


def leaves(*ts):
    return [t.detach().clone().requires_grad_() for t in ts]


def check_grads(m, x, c, want, summed=()):
    """m's gradients eagerly and compiled equal `want` (the unsharded model's, sliced
    to this rank's shard; for the indices in `summed`, replicated parameters, their
    sum over the ranks does); compiled equals symmflow's eager run of its .sf bitwise."""
    params = list(m.parameters())
    step = grads_step(m)
    eager = step(params, x, c)
    fast = sft.compile(step, name=f"grads_{type(m).__name__}")
    compiled = fast(params, x, c)
    sf_eager = fast.run_eager_sf(params, x, c)
    for i, (e, got, ref, s) in enumerate(zip(eager, compiled, want, sf_eager)):
        assert bitwise_equal(s, got)
        if i in summed:
            e, got = sft.all_reduce(e), sft.all_reduce(got)
        torch.testing.assert_close(e, ref, atol=1e-3, rtol=1e-3)  # sums in another order
        torch.testing.assert_close(got, ref, atol=1e-3, rtol=1e-3)
    return fast


def loss_weights(world, shape, seed):
    """Rank r's loss is sum(c_r * out): the loss differentiated is their sum."""
    cs = [randn(*shape, seed=seed + r) for r in range(world)]
    return cs, sum(cs)


def test_megatron_mlp_gradients_equal_the_unsharded_models(rank, world):
    d, hidden = 16, 8 * world
    m = MegatronMLP(d, hidden, rank, world)
    x = randn(6, d, seed=5)
    cs, c_total = loss_weights(world, (6, d), 400)
    w1, b1, w2 = leaves(*m.full)
    y = F.gelu(x @ w1.t() + b1, approximate="tanh") @ w2.t() + x
    g1, gb, g2 = torch.autograd.grad((c_total * y).sum(), [w1, b1, w2])
    h = slice(rank * hidden // world, (rank + 1) * hidden // world)
    fast = check_grads(m, x, cs[rank], [g1[h], gb[h], g2[:, h]])
    # forward all_reduce_ and its backward all_reduce
    assert fast.sf_text(list(m.parameters()), x, cs[rank]).count("c10d::all_reduce") == 2


def test_attention_gradients_equal_the_unsharded_models(rank, world):
    heads = 2 * world
    d = 8 * heads
    m = ParallelAttention(d, heads, rank, world)
    x = randn(2, 6, d, seed=7)
    cs, c_total = loss_weights(world, (2, 6, d), 410)
    wq, wk, wv, wo = leaves(*m.full)
    B, T, _ = x.shape
    split = lambda t: t.view(B, T, heads, d // heads).transpose(1, 2)
    a = causal_attention(split(x @ wq.t()), split(x @ wk.t()), split(x @ wv.t()))
    y = a.transpose(1, 2).reshape(B, T, d) @ wo.t()
    gq, gk, gv, go = torch.autograd.grad((c_total * y).sum(), [wq, wk, wv, wo])
    cols = slice(rank * d // world, (rank + 1) * d // world)
    check_grads(m, x, cs[rank], [gq[cols], gk[cols], gv[cols], go[:, cols]])


def test_sequence_parallel_gradients_equal_the_unsharded_models(rank, world):
    d, hidden = 16, 8 * world
    m = SequenceParallelBlock(d, hidden, rank, world)
    x_full = randn(4 * world, d, seed=9)
    x = x_full.chunk(world)[rank].clone()
    cs, _ = loss_weights(world, (4, d), 420)
    lw, lb = leaves(m.ln.weight, m.ln.bias)
    w1, b1, w2 = leaves(*m.mlp.full)
    hN = F.layer_norm(x_full, (d,), lw, lb)
    y = F.gelu(hN @ w1.t() + b1) @ w2.t() + x_full
    g = torch.autograd.grad((torch.cat(cs) * y).sum(), [lw, lb, w1, b1, w2])
    h = slice(rank * hidden // world, (rank + 1) * hidden // world)
    # layer_norm's parameters are replicated: each rank's gradient is the part of
    # its hidden units (Megatron-SP all_reduces them)
    check_grads(m, x, cs[rank], [g[0], g[1], g[2][h], g[3][h], g[4][:, h]], summed=(0, 1))


def mlp(d_in, hidden, d_out, seed):
    torch.manual_seed(seed)  # the same initial weights on every rank
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                               torch.nn.GELU(), torch.nn.Linear(hidden, d_out))


def batches(rank, steps, n, d_in, d_out):
    return [(randn(n, d_in, seed=500 + 10 * s + rank), randn(n, d_out, seed=700 + 10 * s + rank))
            for s in range(steps)]


@pytest.mark.parametrize("optimizer,momentum,bucket_bytes", [("sgd", 0.0, 1 << 18), ("sgd", 0.9, 0), ("adam", 0.0, 1 << 18)])
def test_data_parallel_equals_pytorch_distributed_data_parallel(optimizer, momentum, bucket_bytes, rank, world):
    dist = torch_distributed()
    steps, lr = 3, 0.05
    # f32 rounding; Adam divides each gradient by its own magnitude, so a gradient
    # that nearly cancels across the ranks (its sum rounded another way by gloo)
    # moves its weight by up to lr * its relative rounding error: 1e-4 is 0.2% of a step.
    atol = 1e-4 if optimizer == "adam" else 1e-6
    data = batches(rank, steps, 8, 12, 5)
    ref_model = mlp(12, 32, 5, seed=3)
    ddp = torch.nn.parallel.DistributedDataParallel(ref_model)
    opt = torch_optimizer(optimizer, ddp.parameters(), lr, momentum)
    model = mlp(12, 32, 5, seed=3)
    dp = sft.DataParallel(model, F.mse_loss, lr=lr, optimizer=optimizer, momentum=momentum,
                          bucket_bytes=bucket_bytes)
    eager_model = mlp(12, 32, 5, seed=3)
    eager = sft.DataParallel(eager_model, F.mse_loss, lr=lr, optimizer=optimizer, momentum=momentum,
                             bucket_bytes=bucket_bytes, compile=False)
    for x, y in data:
        eager.step(x, y)
        ref_loss = reference_step(ddp, opt, x, y)
        loss = dp.step(x, y)
        torch.testing.assert_close(loss, ref_loss, atol=1e-6, rtol=1e-5)
        for p, q in zip(model.parameters(), ref_model.parameters()):
            torch.testing.assert_close(p.detach(), q.detach(), atol=atol, rtol=1e-5)
    for p, q in zip(model.parameters(), eager_model.parameters()):  # compiled = the same step run eagerly
        torch.testing.assert_close(p.detach(), q.detach(), atol=atol, rtol=1e-5)
    assert dp._fn.programs == 1  # one program serves every step
    text = dp._fn.sf_text(dp.params, dp.state, *data[0])
    if bucket_bytes == 0:
        # one all_reduce per gradient, the first started during backward, before the
        # first layer's weight gradient (the trace's last matmul) is computed
        assert text.count("c10d::all_reduce_(") == 6
        assert text.index("c10d::all_reduce_") < text.rindex("aten::mm(")
    else:
        assert text.count("c10d::all_reduce_(") == 1  # the small model's gradients: one bucket
    head = dp.explain(*data[0]).splitlines()[0]
    assert head.endswith(" 0 copies (0 bytes)"), head  # the parameters are updated where they are
