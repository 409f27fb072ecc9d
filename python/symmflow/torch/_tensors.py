"""torch.Tensor <-> symmflow tensors, through DLPack, without copies.

A torch tensor goes to symmflow as a view of its own memory (the DLPack capsule
keeps it alive while symmflow holds it); a symmflow tensor comes back to torch the
same way. torch 1.13 cannot put bool through DLPack, so bool crosses as uint8 and
is viewed back (a view, not a copy).
"""
import numpy as np
import torch
import torch.utils.dlpack as _dlpack

from .. import _C

_DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.bfloat16: "bf16", torch.float16: "f16",
    torch.int32: "i32", torch.int64: "i64", torch.bool: "bool",
}
_TORCH_DTYPES = {v: k for k, v in _DTYPES.items()}


def dtype_name(dtype):
    """symmflow's name of a torch dtype ("f32", ...); a symmflow.Error for one it lacks."""
    try:
        return _DTYPES[dtype]
    except KeyError:
        raise _C.Error(f"dtype {dtype} is not one of symmflow's (float32, float64, bfloat16, float16, "
                       f"int32, int64, bool)") from None


def torch_dtype(name):
    return _TORCH_DTYPES[name]


def as_torch(x, what="argument"):
    """A torch.Tensor for a torch tensor or a numpy array (torch.from_numpy shares memory)."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x)
    raise TypeError(f"{what}: expected a torch.Tensor or numpy.ndarray, got {type(x).__name__}")


def check_cpu(t, what):
    if t.device.type != "cpu":
        raise _C.Error(f"{what}: a tensor on {t.device}; symmflow runs on CPU tensors (use .cpu())")


def to_sf(t, what="argument"):
    """A symmflow tensor over t's memory (no copy). t: torch.Tensor or numpy.ndarray."""
    t = as_torch(t, what)
    check_cpu(t, what)
    dtype_name(t.dtype)
    return to_sf_checked_already(t)


def to_sf_checked_already(t):
    """to_sf for a CPU torch tensor of a symmflow dtype (a compiled call's signature checked it)."""
    if t.requires_grad:
        t = t.detach()
    if t.dtype == torch.bool:
        return _C.Tensor.from_dlpack(_dlpack.to_dlpack(t.view(torch.uint8)), True)
    return _C.Tensor.from_dlpack(_dlpack.to_dlpack(t), False)


def from_sf(s):
    """A torch.Tensor over a symmflow tensor's memory (no copy)."""
    cap, is_bool = s.to_dlpack()
    t = _dlpack.from_dlpack(cap)
    return t.view(torch.bool) if is_bool else t


def extent(t):
    """Elements from t's first element to its last, inclusive (0 when empty)."""
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


def is_dense(t):
    """Contiguous row-major (what a .sf graph input is)."""
    return t.is_contiguous()


def flat_base(t):
    """A contiguous 1-D view of the memory a strided t spans (a .sf graph input;
    the program re-creates t with aten::as_strided)."""
    return torch.as_strided(t, (extent(t),), (1,))


def is_symmetric(t):
    """Whether t's memory is in the symmetric heap (sft.empty, a symmetric result)."""
    t = as_torch(t)
    if t.device.type != "cpu" or t.numel() == 0:
        return False
    return _C.is_symmetric_address(t.data_ptr())
