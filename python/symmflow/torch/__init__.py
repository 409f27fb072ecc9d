"""symmflow for PyTorch programs (DESIGN.md section 9, docs/python.md).

    import torch
    import symmflow.torch as sft

    sft.init()                                   # under `symmflow launch` or mpirun
    x = sft.empty((64, 256), dtype=torch.float32)  # storage in the symmetric heap
    sft.all_reduce_(x)                           # in place, zero copy
    fast = sft.compile(fn)                       # traced per input signature, replayed
    print(fast.explain(x))

Communication ops run eagerly on torch tensors through symmflow's runtime, and
make_fx records each call as one op, so a compiled function keeps them.
"""
import os

import torch

from .. import _C
from . import _autograd, _compile, _ops, _pipeline, _source, _tensors, _train

Error = _C.Error
_ops.register()

__all__ = ["init", "rank", "world_size", "empty", "is_symmetric", "all_reduce_", "all_reduce", "all_gather",
           "reduce_scatter", "all_to_all", "broadcast_", "P2POp", "Work", "batch_isend_irecv", "isend", "irecv",
           "send", "recv", "all_reduce_gradients", "sgd_", "adam_", "DataParallel", "pipeline_1f1b",
           "PipelineParallel", "compile", "export", "Error", "CompiledFunction"]

CompiledFunction = _compile.CompiledFunction
all_reduce_gradients, sgd_, adam_, DataParallel = (_train.all_reduce_gradients, _train.sgd_, _train.adam_,
                                                   _train.DataParallel)
pipeline_1f1b, PipelineParallel = _pipeline.pipeline_1f1b, _pipeline.PipelineParallel


def init():
    """Attach to the job `symmflow launch` (or mpirun) started. Idempotent."""
    if _C.is_initialized():
        return
    launched = "SYMMFLOW_RENDEZVOUS" in os.environ or any(
        k in os.environ for k in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))
    if not launched:
        raise Error("symmflow.torch.init: this process was not started by `symmflow launch` or mpirun; run "
                    "`symmflow launch --nproc N -- python3 script.py` (N = 1 is a world of one rank)")
    _C.init()


def rank():
    init()
    return _C.rank()


def world_size():
    init()
    return _C.world_size()


def _group(group, what):
    if not isinstance(group, str):
        raise TypeError(f"{what}: group must be a group name (\"world\"), got {type(group).__name__}")
    init()
    if not _C.has_group(group):
        raise Error(f"{_source.caller()}: {what}: no process group named '{group}' (this job has \"world\")")
    return group


def _tensor(t, what):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{what}: expected a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cpu":
        raise Error(f"{_source.caller()}: {what}: a tensor on {t.device}; symmflow runs on CPU tensors (use .cpu())")
    return t


def empty(shape, dtype=torch.float32, group="world"):
    """A torch.Tensor whose storage is in the group's symmetric heap (same offset on
    every rank; collective: every rank allocates the same). Freed when torch frees it.
    Inside a compiled function it is a plain allocation the compiler places."""
    if isinstance(shape, int):
        shape = (shape,)
    if _compile.tracing():
        return torch.empty(tuple(shape), dtype=dtype)
    _group(group, "empty")
    return _tensors.from_sf(_C.symmetric_empty([int(s) for s in shape], _tensors.dtype_name(dtype), group))


def is_symmetric(t):
    """Whether t's storage is in symmetric memory."""
    return _tensors.is_symmetric(t)


_c10d = torch.ops.symmflow


def _differentiable(t):
    """Whether a call records its backward (autograd.py's Functions): only then, so a
    call without gradients traces exactly the ops it always did."""
    return t.requires_grad and torch.is_grad_enabled()


def all_reduce_(t, op="sum", group="world"):
    """t := the reduction of every rank's t, in place. Returns t."""
    t, g = _tensor(t, "all_reduce_"), _group(group, "all_reduce_")
    if _differentiable(t):
        return _autograd.AllReduceInPlace.apply(t, op, g)
    return _c10d.all_reduce_(t, op, g)


def all_reduce(t, op="sum", group="world"):
    """A new tensor: the reduction of every rank's t."""
    t, g = _tensor(t, "all_reduce"), _group(group, "all_reduce")
    if _differentiable(t):
        return _autograd.AllReduce.apply(t, op, g)
    return _c10d.wait_tensor(_c10d.all_reduce(t, op, g))


def all_gather(t, group="world"):
    """The ranks' tensors concatenated on dim 0."""
    t, g = _tensor(t, "all_gather"), _group(group, "all_gather")
    if _differentiable(t):
        return _autograd.AllGather.apply(t, g)
    return _c10d.wait_tensor(_c10d.all_gather_into_tensor(t, _autograd.group_size(g), g))


def reduce_scatter(t, op="sum", group="world"):
    """Reduced over ranks, then split on dim 0: this rank's part."""
    t, g = _tensor(t, "reduce_scatter"), _group(group, "reduce_scatter")
    if _differentiable(t):
        return _autograd.ReduceScatter.apply(t, op, g)
    return _c10d.wait_tensor(_c10d.reduce_scatter_tensor(t, op, _autograd.group_size(g), g))


def all_to_all(t, group="world"):
    """Dim 0 split in world equal parts; part r goes to rank r; the parts received, in rank order."""
    t, g = _tensor(t, "all_to_all"), _group(group, "all_to_all")
    if _differentiable(t):
        return _autograd.AllToAll.apply(t, g)
    return _c10d.wait_tensor(_c10d.all_to_all_single(t, [], [], g))


def broadcast_(t, src=0, group="world"):
    """t := rank src's t, in place. Returns t."""
    t, g = _tensor(t, "broadcast_"), _group(group, "broadcast_")
    if _differentiable(t):
        return _autograd.BroadcastInPlace.apply(t, int(src), g)
    return _c10d.broadcast_(t, int(src), g)


def send(t, dst, group="world", tag=0):
    """Sends t to rank dst and waits. Returns a 0-dim zero, the send's token: when t
    requires grad, differentiating the token (or a loss it was added to) receives
    the gradient of what was sent from dst (its sft.recv's backward)."""
    t, g = _tensor(t, "send"), _group(group, "send")
    if _differentiable(t):
        return _autograd.Send.apply(t, int(dst), int(tag), g)
    _autograd._send(t, int(dst), int(tag), g)
    return torch.zeros((), dtype=t.dtype)


def recv(buf, src, group="world", tag=0):
    """A new tensor shaped like buf: what rank src sent (buf is not written). When buf
    requires grad, the result's backward sends its gradient back to src; list buf
    among torch.autograd.grad's inputs (its gradient is zero), or use
    loss.backward(), so that autograd runs that backward."""
    buf, g = _tensor(buf, "recv"), _group(group, "recv")
    if _differentiable(buf):
        return _autograd.Recv.apply(buf, int(src), int(tag), g)
    return _autograd._recv(buf.shape, buf.dtype, int(src), int(tag), g)


class P2POp:
    """One entry of batch_isend_irecv: op is "isend" or "irecv" (or torch.distributed's
    isend/irecv functions), peer a rank of the group."""

    def __init__(self, op, tensor, peer, group="world", tag=0):
        if callable(op):
            op = op.__name__
        if op not in ("isend", "irecv"):
            raise ValueError(f"P2POp: op must be \"isend\" or \"irecv\", got {op!r}")
        self.op, self.tensor, self.peer, self.group, self.tag = op, _tensor(tensor, "P2POp"), int(peer), group, int(tag)


class Work:
    """A transfer in flight; wait() returns when its tensor may be used (traced as
    c10d::wait_tensor)."""

    def __init__(self, handle):
        self._handle = handle

    def wait(self):
        _c10d.wait_tensor(self._handle)
        return True


def batch_isend_irecv(ops):
    """Starts every send and receive; returns one Work per op. When a sent tensor
    requires grad and the batch receives too, the receive buffers' later uses
    record a backward (_autograd.BatchIsendIrecv: the batch reversed); a batch
    of sends alone records none (use sft.send)."""
    if not ops:
        return []
    groups = {o.group for o in ops}
    if len(groups) != 1:
        raise Error(f"{_source.caller()}: batch_isend_irecv: every op must use one group, got {sorted(groups)}")
    g = _group(groups.pop(), "batch_isend_irecv")
    meta = ([o.op for o in ops], [o.peer for o in ops], [o.tag for o in ops], g)
    tensors = [o.tensor for o in ops]
    if "irecv" in meta[0] and any(o.op == "isend" and _differentiable(o.tensor) for o in ops):
        handles = []  # filled by the forward: the Work objects wait outside the autograd node
        _autograd.BatchIsendIrecv.apply(meta, handles, *tensors)
    else:
        handles = _c10d.batch_isend_irecv(*meta[:3], tensors, g)
    return [Work(h) for h in handles]


def isend(t, dst, group="world", tag=0):
    return Work(_c10d.isend(_tensor(t, "isend"), int(dst), int(tag), _group(group, "isend")))


def irecv(t, src, group="world", tag=0):
    return Work(_c10d.irecv_(_tensor(t, "irecv"), int(src), int(tag), _group(group, "irecv")))


def compile(fn=None, *, name=None, overlap=True, max_in_flight=0, verify=False):
    """fn (a function or nn.Module) compiled by symmflow: traced on the first call per
    input signature, then replayed. Usable as a decorator, with or without options."""
    if fn is None:
        return lambda f: CompiledFunction(f, name=name, overlap=overlap, max_in_flight=max_in_flight, verify=verify)
    return CompiledFunction(fn, name=name, overlap=overlap, max_in_flight=max_in_flight, verify=verify)


def export(fn, args, path, kwargs=None):
    """Writes fn traced on args as a .sf program (collective: every rank traces).

    Integer constants that differ between ranks (peers, offsets) are written as
    expressions over `rank` and `world` when one fits every rank, so the one file
    runs on every rank: `symmflow run path --nproc W --check`."""
    from . import _export
    return _export.export(fn, tuple(args), dict(kwargs or {}), path)
