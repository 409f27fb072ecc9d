"""symmflow's communication ops as torch ops (torch.library), schemas unchanged.

Every op of symmflow's ``c10d::`` and ``symm_mem::`` namespaces is defined in
torch from the schema symmflow itself registered (one source of truth), with:

- a CPU kernel that runs it eagerly through symmflow's runtime on the torch
  tensors' own memory (zero copy when the tensor is symmetric, the runtime's
  counted staged path otherwise);
- a Meta kernel (symmflow's own Meta kernel: types without data), so fake and
  meta tensors trace too.

make_fx records each call as one node. torch 1.13 owns the ``c10d`` namespace
(its ``c10d::broadcast_`` has another schema), so symmflow's c10d ops live in
torch as ``torch.ops.symmflow.<name>``; the translator writes them back as
``c10d::<name>``. The seeds' ops keep their namespace: ``torch.ops.symm_mem.*``.

P2P is asynchronous, as in eager PyTorch: ``isend``/``irecv_``/``batch_isend_irecv``
start transfers and return their tensors; ``wait_tensor`` on such a tensor waits
for it. Collectives complete before they return, so their ``wait_tensor`` is free.
"""
import torch

from .. import _C
from . import _source, _tensors

# symmflow namespace -> torch namespace
TORCH_NAMESPACE = {"c10d": "symmflow", "symm_mem": "symm_mem"}
SF_NAMESPACE = {v: k for k, v in TORCH_NAMESPACE.items()}

_libs = {}  # torch namespace -> torch.library.Library (kept alive: dropping one unregisters)


def _to_sf_arg(a, op):
    if isinstance(a, torch.Tensor):
        return _tensors.to_sf(a, op)
    if isinstance(a, (list, tuple)):
        return [_to_sf_arg(x, op) for x in a]
    if isinstance(a, torch.dtype):
        return _tensors.dtype_name(a)
    return a


def _to_meta_arg(a, op):
    if isinstance(a, torch.Tensor):
        return _C.meta_tensor(list(a.shape), list(a.stride()), _tensors.dtype_name(a.dtype))
    if isinstance(a, (list, tuple)):
        return [_to_meta_arg(x, op) for x in a]
    return a


def _results(aliases, inputs, results, make):
    """The torch results: an aliased return is the input itself (as in eager PyTorch)."""
    out = []
    for i, r in enumerate(results):
        j = aliases[i] if i < len(aliases) else None
        if j is not None and j < len(inputs):
            src = inputs[j]
            out.append(list(src) if isinstance(src, (list, tuple)) else src)
        elif isinstance(r, list):
            out.append([make(x) for x in r])
        else:
            out.append(make(r))
    if not out:
        return None
    return out[0] if len(out) == 1 else tuple(out)


def _bound(schema, args, kwargs):
    """Positional arguments in schema order (torch passes keyword-only ones by name)."""
    args = list(args)
    for a in schema.arguments[len(args):]:
        if a.name in kwargs:
            args.append(kwargs[a.name])
        elif a.has_default_value():
            args.append(a.default_value)
        else:
            break
    return args


def _cpu_kernel(sf_name, schema, aliases):
    short = sf_name.split("::")[1].split(".")[0]

    if short in ("isend", "irecv_"):
        def p2p_one(t, peer, tag, group):
            kind = "isend" if short == "isend" else "irecv"
            _C.p2p_start([kind], [peer], [tag], [_tensors.to_sf(t, sf_name)], group)
            return t
        return p2p_one
    if short == "batch_isend_irecv":
        def p2p_batch(op_types, peers, tags, tensors, group):
            _C.p2p_start(list(op_types), list(peers), list(tags), [_tensors.to_sf(t, sf_name) for t in tensors], group)
            return list(tensors)
        return p2p_batch
    if short == "wait_tensor":
        def wait(t):
            _C.p2p_wait(_tensors.to_sf(t, sf_name))
            return t
        return wait

    def kernel(*args, **kwargs):
        inputs = _bound(schema, args, kwargs)
        try:
            res = _C.call_op(sf_name, [_to_sf_arg(a, sf_name) for a in inputs], {})
        except _C.Error as e:
            raise _C.Error(f"{_source.caller()}: {e}") from None
        return _results(aliases, inputs, res, _tensors.from_sf)
    return kernel


def _meta_kernel(sf_name, schema, aliases):
    def make(m):
        return torch.empty_strided(m.shape, m.strides, dtype=_tensors.torch_dtype(m.dtype), device="meta")

    def kernel(*args, **kwargs):
        inputs = _bound(schema, args, kwargs)
        res = _C.call_meta(sf_name, [_to_meta_arg(a, sf_name) for a in inputs], {})
        return _results(aliases, inputs, res, make)
    return kernel


def register():
    """Defines symmflow's c10d:: and symm_mem:: ops in torch (once)."""
    if _libs:
        return
    for sf_ns, torch_ns in TORCH_NAMESPACE.items():
        lib = torch.library.Library(torch_ns, "DEF")
        _libs[torch_ns] = lib
        for text in _C.op_schemas(sf_ns):
            decl = text.split("::", 1)[1]  # "name.overload(args) -> returns"
            lib.define(decl)
            sf_name = text.split("(", 1)[0]
            name, _, overload = decl.split("(", 1)[0].partition(".")
            packet = getattr(getattr(torch.ops, torch_ns), name)
            schema = getattr(packet, overload or "default")._schema
            aliases = _C.op_return_aliases(sf_name)
            lib.impl(decl.split("(", 1)[0], _cpu_kernel(sf_name, schema, aliases), "CPU")
            meta = _meta_kernel(sf_name, schema, aliases)
            lib.impl(decl.split("(", 1)[0], meta, "Meta")
            # torch 1.13 has no fallthrough for meta tensors' autograd key: without
            # this, a meta tensor never reaches the Meta kernel.
            lib.impl(decl.split("(", 1)[0], meta, "AutogradMeta")
