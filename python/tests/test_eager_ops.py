"""Communication on torch tensors, eagerly: symmetric tensors in place, regular ones staged."""
import pytest
import torch

import symmflow.torch as sft
from symmflow import _C
from conftest import randn


@pytest.mark.parametrize("symmetric", [True, False])
def test_all_reduce_in_place_sums_every_rank(rank, world, symmetric):
    x = sft.empty((4, 8)) if symmetric else torch.empty(4, 8)
    x.copy_(randn(4, 8, seed=rank))
    out = sft.all_reduce_(x)
    assert out is x
    expect = sum(randn(4, 8, seed=r) for r in range(world))
    torch.testing.assert_close(x, expect)


def test_functional_collectives_match_their_definitions(rank, world):
    t = randn(2 * world, 3, seed=10 + rank)
    every = [randn(2 * world, 3, seed=10 + r) for r in range(world)]
    torch.testing.assert_close(sft.all_reduce(t), sum(every))
    torch.testing.assert_close(sft.all_reduce(t, op="max"), torch.stack(every).amax(0))
    assert torch.equal(sft.all_gather(t), torch.cat(every))
    torch.testing.assert_close(sft.reduce_scatter(t), sum(every).chunk(world)[rank])
    assert torch.equal(sft.all_to_all(t), torch.cat([e.chunk(world)[rank] for e in every]))
    b = t.clone()
    assert sft.broadcast_(b, src=world - 1) is b
    assert torch.equal(b, every[world - 1])


def test_p2p_ring_exchange_with_works(rank, world):
    send = torch.full((5,), float(rank))
    recv = sft.empty((5,))
    works = sft.batch_isend_irecv([sft.P2POp("isend", send, (rank + 1) % world),
                                   sft.P2POp("irecv", recv, (rank - 1) % world)])
    for w in works:
        w.wait()
    assert torch.equal(recv, torch.full((5,), float((rank - 1) % world)))


def test_seed_ops_keep_their_schemas_and_return_the_alias(rank, world):
    x = sft.empty((16,))
    x.fill_(rank + 1.0)
    y = torch.ops.symm_mem.multimem_all_reduce_(x, "sum", "world")
    assert y is x and torch.all(x == world * (world + 1) / 2)
    schema = str(torch.ops.symm_mem.multimem_all_reduce_.default._schema)
    assert "Tensor(a!) input" in schema and schema.endswith("-> Tensor(a!)")
    z = sft.empty((8,))
    z.fill_(1.0)
    torch.ops.symm_mem.two_shot_all_reduce_(z, "sum", "world")
    assert torch.all(z == world)


def test_meta_kernels_give_types_without_data(world):
    m = torch.empty(4, 8, device="meta")
    r = torch.ops.symmflow.all_gather_into_tensor(m, world, "world")
    assert r.device.type == "meta" and r.shape == (4 * world, 8)
    a = torch.ops.symm_mem.multimem_all_reduce_(m, "sum", "world")
    assert a is m


def test_unknown_group_names_the_group_and_the_line():
    with pytest.raises(sft.Error, match=r"test_eager_ops.py:\d+.*no process group named 'tp'"):
        sft.all_reduce_(torch.ones(2), group="tp")


def test_a_seed_op_on_regular_memory_is_staged_and_counted(world):
    before = _C.staged_copy_stats()
    x = torch.ones(8)
    assert torch.ops.symm_mem.multimem_all_reduce_(x, "sum", "world") is x
    assert torch.all(x == world)
    after = _C.staged_copy_stats()
    assert after[0] - before[0] == 2 and after[1] - before[1] == 2 * 8 * 4  # in and out


def test_make_fx_records_each_communication_call_as_one_node(rank, world):
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, buf):
        sft.all_reduce_(x)
        works = sft.batch_isend_irecv([sft.P2POp("isend", x, (rank + 1) % world),
                                       sft.P2POp("irecv", buf, (rank - 1) % world)])
        for w in works:
            w.wait()
        return torch.ops.symm_mem.multimem_all_reduce_(buf, "sum", "world")

    gm = make_fx(f)(torch.ones(4), torch.zeros(4))
    ops = [str(n.target) for n in gm.graph.nodes if n.op == "call_function" and "getitem" not in str(n.target)]
    assert ops == ["symmflow.all_reduce_.default", "symmflow.batch_isend_irecv.default",
                   "symmflow.wait_tensor.default", "symmflow.wait_tensor.default",
                   "symm_mem.multimem_all_reduce_.default"], ops


def test_f32_gelu_gives_pytorchs_bits():
    """PyTorch 1.13's f32 gelu is oneDNN's gelu_erf; symmflow computes the same
    instruction sequence in its own code (kernels/gelu_erf.h), four vectors at a
    time: every f32 bit pattern checked (every 997th, the smallest subnormals of
    both signs, NaNs and infinities) gives PyTorch's bits, eager and in place."""
    import numpy as np
    from symmflow.torch import _tensors
    u = np.concatenate([np.arange(0, 2**32, 997, dtype=np.uint64).astype(np.uint32),
                        np.arange(0, 4096, dtype=np.uint32), np.arange(2**31, 2**31 + 4096, dtype=np.uint32),
                        np.array([0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001], dtype=np.uint32)])
    x = torch.from_numpy(u.view(np.float32).copy())
    expect = torch.nn.functional.gelu(x).numpy().view(np.uint32)
    got = _tensors.from_sf(_C.call_op("aten::gelu", [_tensors.to_sf(x)], {})[0])
    assert np.array_equal(got.numpy().view(np.uint32), expect)
    _C.call_op("aten::gelu_", [_tensors.to_sf(x)], {})
    assert np.array_equal(x.numpy().view(np.uint32), expect)


def test_call_op_knows_a_symmflow_tensor_by_its_exact_type():
    # call_op recognizes its Tensor class by the exact Python type (looked up once,
    # not per argument): so the class must refuse subclasses, and tensors inside
    # lists and results must still convert both ways.
    with pytest.raises(TypeError):
        class Sub(_C.Tensor):
            pass
    from symmflow.torch import _tensors
    a, b = torch.arange(6.0).reshape(2, 3), torch.full((2, 3), 2.0)
    s = _C.call_op("aten::add", [_tensors.to_sf(a), _tensors.to_sf(b)], {})[0]
    assert type(s) is _C.Tensor
    assert torch.equal(_tensors.from_sf(s), a + b)
    cat = _C.call_op("aten::cat", [[_tensors.to_sf(a), s], 0], {})[0]
    assert torch.equal(_tensors.from_sf(cat), torch.cat([a, a + b]))
    with pytest.raises(Exception, match="cannot pass a Python"):
        _C.call_op("aten::neg", [object()], {})
