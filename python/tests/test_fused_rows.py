"""Row-wise chains as PyTorch programs hold them (an RMSNorm module, softmax and
layer_norm written out) compile into symmflow::fused_rows nodes
(passes/fuse_rows), and compiled stays bitwise equal to symmflow's eager run of
the traced .sf, on every rank. torch.softmax and F.layer_norm trace as single ops
(aten::_softmax, aten::native_layer_norm), one kernel each already: no group."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import symmflow.torch as sft
from conftest import bitwise_equal, check_three_ways, randn


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(randn(d, seed=7))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def softmax_written_out(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def layer_norm_written_out(x, w, b):
    d = x - x.mean(-1, keepdim=True)
    return d * torch.rsqrt((d * d).mean(-1, keepdim=True) + 1e-5) * w + b


def fused_lines(text):
    return [l.strip() for l in text.splitlines() if l.strip().startswith("fused:")]


def test_rms_norm_module_is_one_fused_row_group(rank):
    m = RMSNorm(130)
    x = randn(1100, 130, seed=rank + 1)  # 1100 rows of 130: three blocks, no vector width divides a row
    fast = sft.compile(m)
    check_three_ways(fast, m, [x])
    text = fast.explain(x)
    assert fused_lines(text) == ["fused: 1 group of row-wise ops with reductions over the last dim (6 ops), "
                                 "each one loop over blocks of rows"], text
    assert "aten::pow.Tensor_Scalar -> aten::mean.dim" in text, text


def test_softmax_and_layer_norm_written_out_fuse(rank):
    x, w, b = randn(4, 9, 37, seed=rank + 3), randn(37, seed=8), randn(37, seed=9)
    for fn, args, ops in [(softmax_written_out, [x], 5), (layer_norm_written_out, [x, w, b], 9)]:
        fast = sft.compile(fn)
        check_three_ways(fast, fn, args)
        text = fast.explain(*args)
        assert fused_lines(text) == [f"fused: 1 group of row-wise ops with reductions over the last dim ({ops} ops), "
                                     "each one loop over blocks of rows"], text


def test_single_op_softmax_and_layer_norm_stay_single_kernels():
    x, w, b = randn(8, 64, seed=1), randn(64, seed=2), randn(64, seed=3)
    for fn, args in [(lambda x: torch.softmax(x, -1), [x]), (lambda x, w, b: F.layer_norm(x, (64,), w, b), [x, w, b])]:
        fast = sft.compile(fn)
        check_three_ways(fast, fn, args)
        assert fused_lines(fast.explain(*args)) == []


def test_every_rank_gets_the_same_bits_after_an_all_reduce(rank, world):
    m = RMSNorm(130)

    def f(x):
        sft.all_reduce_(x)
        return softmax_written_out(m(x))

    fast = sft.compile(f)
    out = fast(randn(64, 130, seed=rank + 11))
    every = sft.all_gather(out.contiguous()).reshape(world, 64, 130)
    assert all(bitwise_equal(every[r], every[0]) for r in range(world))
    assert len(fused_lines(fast.explain(randn(64, 130, seed=rank + 11)))) == 1
