"""A fresh elementwise result has the strides PyTorch gives it (TensorIterator's
rule, core/layout.h): each case runs in PyTorch and in symmflow (its CPU kernel and
its Meta kernel), and the strides and values must agree.

The C++ table in src/symmflow/core/layout_test.cc holds these cases' answers, as
torch 1.13 printed them (`python3 python/tests/test_result_layout.py` prints them).
"""
import pytest
import torch

from symmflow import _C
from symmflow.torch import _tensors


def _r(*shape, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(len(shape) + sum(shape))).to(dtype)


def _strided(shape, strides):
    """A view with exactly these strides (a size-1 dim's stride too) over fresh data."""
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    return _r(extent).as_strided(shape, strides)


x = _r(3, 4)
y = _r(4, 3)
w = _r(2, 3, 4)
z = _r(4, 6)
cl = _r(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)

# (name, symmflow op, args, PyTorch's function of the same args)
CASES = [
    ("exp of x.t()", "aten::exp", [x.t()], torch.exp),
    ("exp of a 3-d permute", "aten::exp", [w.permute(2, 0, 1)], torch.exp),
    ("add x.t() + y: the first operand decides", "aten::add", [x.t(), y], torch.add),
    ("add y + x.t()", "aten::add", [y, x.t()], torch.add),
    ("add row + x.t()", "aten::add", [_r(3), x.t()], torch.add),
    ("add x.t() + column", "aten::add", [x.t(), _r(4, 1)], torch.add),
    ("exp of a size-1 dim transposed", "aten::exp", [_r(1, 3).t()], torch.exp),
    ("exp keeps a dense size-1 dim's stride", "aten::exp", [_strided((4, 1, 3), (1, 99, 4))], torch.exp),
    ("add number sorts a size-1 dim", "aten::add", [_strided((4, 1, 3), (1, 99, 4)), 1], torch.add),
    ("exp of contiguous, odd size-1 stride", "aten::exp", [_strided((4, 1, 3), (3, 99, 1))], torch.exp),
    ("add number, contiguous, odd size-1 stride", "aten::add", [_strided((4, 1, 3), (3, 99, 1)), 1], torch.add),
    ("exp of a non-dense slice", "aten::exp", [z[:, ::2]], torch.exp),
    ("exp of a non-dense slice transposed", "aten::exp", [z[:, ::2].t()], torch.exp),
    ("exp of an expanded column", "aten::exp", [_r(3, 1).expand(3, 4)], torch.exp),
    ("add expanded + x.t()", "aten::add", [_r(3, 1).expand(3, 4).t(), x.t()], torch.add),
    ("exp of an expanded row in 3-d", "aten::exp", [_r(1, 1, 5).expand(3, 4, 5)], torch.exp),
    ("exp of an empty transposed", "aten::exp", [_r(0, 3).t()], torch.exp),
    ("add empty permuted + number tensor", "aten::add", [_r(2, 0, 3).permute(2, 1, 0), _r(1)], torch.add),
    ("exp of a 0-d tensor", "aten::exp", [torch.tensor(2.0)], torch.exp),
    ("mul x.t() * number", "aten::mul", [x.t(), 2.0], torch.mul),
    ("add x.t() + 0-d tensor", "aten::add", [x.t(), torch.tensor(1.0)], torch.add),
    ("add f32 x.t() + f64 y", "aten::add", [x.t(), y.double()], torch.add),
    ("add non-dense f32 + contiguous f64", "aten::add", [z[:, ::2].t(), _r(3, 4).double()], torch.add),
    ("exp of channels-last", "aten::exp", [cl], torch.exp),
    ("add two channels-last, odd size-1 strides", "aten::add",
     [_strided((2, 3, 4, 1), (12, 1, 3, 3)), _strided((2, 3, 4, 1), (12, 1, 3, 99))], torch.add),
    ("add permuted 3-d + contiguous", "aten::add", [w.permute(1, 0, 2), w.permute(1, 0, 2).contiguous()], torch.add),
    ("add two alike permutes", "aten::add", [w.permute(2, 1, 0), w.transpose(0, 2)], torch.add),
    ("gt x.t() > 0", "aten::gt", [x.t(), 0], torch.gt),
    ("eq y == x.t()", "aten::eq", [y, x.t()], torch.eq),
    ("where(x.t() > 0, x.t(), y)", "aten::where", [x.t() > 0, x.t(), y], torch.where),
    ("where(column, x.t(), row)", "aten::where", [_r(4, 1) > 0, x.t(), _r(3)], torch.where),
    ("clamp of x.t()", "aten::clamp", [x.t(), -0.5, 0.5], torch.clamp),
    ("hardtanh of x.t()", "aten::hardtanh", [x.t()], torch.nn.functional.hardtanh),
    ("pow of x.t()", "aten::pow", [x.t(), 2], torch.pow),
    ("relu of a 3-d permute", "aten::relu", [w.permute(2, 0, 1)], torch.relu),
]


def _meta_arg(a):
    if not isinstance(a, torch.Tensor):
        return a
    return _C.meta_tensor(list(a.shape), list(a.stride()), _tensors.dtype_name(a.dtype))


def _as_received(a, s):
    """a with the strides symmflow received: torch's DLPack export gives a size-1
    dim stride 1, so the CPU kernel is compared with torch on that geometry."""
    return torch.as_strided(a, a.shape, tuple(s.strides), a.storage_offset()) if isinstance(a, torch.Tensor) else a


@pytest.mark.parametrize("name,op,args,fn", CASES, ids=[c[0] for c in CASES])
def test_fresh_result_has_pytorchs_strides(name, op, args, fn):
    meta = _C.call_meta(op, [_meta_arg(a) for a in args], {})[0]
    assert tuple(meta.strides) == fn(*args).stride(), name + " (Meta kernel)"
    sf_args = [_tensors.to_sf(a) if isinstance(a, torch.Tensor) else a for a in args]
    want = fn(*[_as_received(a, s) for a, s in zip(args, sf_args)])
    got = _C.call_op(op, sf_args, {})[0]
    assert tuple(got.shape) == tuple(want.shape)
    assert tuple(got.strides) == want.stride(), name
    torch.testing.assert_close(_tensors.from_sf(got), want, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    # The C++ table (core/layout_test.cc): result shape, operands, torch's strides.
    def geom(a):
        if not isinstance(a, torch.Tensor):
            return "{{}, {}}"
        return "{%s, %s}" % (("{%s}" % ", ".join(map(str, a.shape))), "{%s}" % ", ".join(map(str, a.stride())))
    for name, op, args, fn in CASES:
        r = fn(*args)
        print('    {"%s", {%s}, {%s}, {%s}},' % (name, ", ".join(map(str, r.shape)), ", ".join(geom(a) for a in args),
                                                 ", ".join(map(str, r.stride()))))
