"""Tensors cross the boundary without copies, both ways, for every dtype."""
import numpy as np
import pytest
import torch

import symmflow.torch as sft
from symmflow import _C
from symmflow.torch import _tensors

DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_to_symmflow_and_back_shares_memory(dtype):
    t = (torch.arange(24) % 3).to(dtype).reshape(4, 6)
    s = _tensors.to_sf(t)
    assert s.data_ptr == t.data_ptr() and s.shape == [4, 6] and s.strides == [6, 1]
    back = _tensors.from_sf(s)
    assert back.dtype == dtype and back.data_ptr() == t.data_ptr() and torch.equal(back, t)
    t[0, 0] = 1  # a write through torch is seen through the round trip
    assert back[0, 0] == t[0, 0]


def test_strided_views_keep_their_strides():
    base = torch.arange(48, dtype=torch.float32).reshape(6, 8)
    v = base[1:5:2, ::3].t()
    s = _tensors.to_sf(v)
    assert s.shape == list(v.shape) and s.strides == list(v.stride()) and s.data_ptr == v.data_ptr()
    assert torch.equal(_tensors.from_sf(s), v)


def test_numpy_arrays_cross_without_copy():
    a = np.arange(10, dtype=np.float64)
    s = _tensors.to_sf(a)
    assert s.data_ptr == a.ctypes.data
    assert s.dtype == "f64"


def test_a_dtype_symmflow_lacks_is_an_error():
    with pytest.raises(sft.Error, match="uint8"):
        _tensors.to_sf(torch.zeros(3, dtype=torch.uint8))


def test_a_meta_tensor_is_refused_with_the_device():
    with pytest.raises(sft.Error, match="meta"):
        sft.all_reduce_(torch.zeros(3, device="meta"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_is_symmetric_and_comes_back_symmetric(dtype):
    x = sft.empty((3, 5), dtype=dtype)
    assert x.dtype == dtype and x.shape == (3, 5)
    assert sft.is_symmetric(x) and sft.is_symmetric(x[1:])
    assert _tensors.to_sf(x[1]).symmetric
    assert not sft.is_symmetric(torch.empty(3, 5, dtype=dtype))
    assert not sft.is_symmetric(x.clone())


def test_symmetric_memory_is_released_when_torch_frees_it():
    import gc
    x = sft.empty((1024,))
    p = x.data_ptr()
    assert _C.is_symmetric_address(p)
    del x
    gc.collect()
    assert not _C.is_symmetric_address(p)
