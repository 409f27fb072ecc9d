"""sft.compile: trace with make_fx on the first call per input signature, compile
the aten graph with symmflow's whole pipeline, replay it on the caller's tensors.

    fast = sft.compile(fn)        # a function or an nn.Module
    out = fast(x, w)              # first call per signature: trace + compile; then replay

- The signature is every tensor argument's shape, strides, dtype and whether it
  is symmetric (and where in its symmetric allocation), plus the values of the
  non-tensor arguments, which the trace bakes in (as Python control flow is:
  a branch on sft.rank() is resolved on each rank).
- A module's parameters and buffers are graph inputs, read at every call, never
  constants: an optimizer step is seen by the next call.
- The trace runs the function once on clones of the inputs (make_fx "real"
  mode, so captured tensors become inputs too and communication runs as in
  eager); the caller's tensors are not touched by it.
- Training steps trace too: tensors that require grad (parameters) stay so in
  the trace, `torch.autograd.grad` records the backward (communication included,
  _autograd.py), backward ops symmflow lacks are traced as torch's
  decompositions, and collectives move up to right after what they need
  (_hoist.py), so the scheduler overlaps them with the rest of backward.
- Replay: every tensor crosses by DLPack, nothing is copied at the boundary;
  inputs the program writes are written in place, as eagerly.
"""
import contextlib
import traceback

import numpy as np
import torch
from torch.fx.experimental import proxy_tensor
from torch.utils import _pytree as pytree

from .. import _C
from . import _hoist, _source, _tensors, _translate

_state = {"tracing": False}


def tracing():
    """True while symmflow traces a function (sft.empty then records aten::empty)."""
    return _state["tracing"]


@contextlib.contextmanager
def _recording_locations():
    """Each node make_fx creates gets meta["sf_loc"]: the user's source line."""
    cls = proxy_tensor.PythonKeyTracer
    original = cls.create_node

    def create_node(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.meta["sf_loc"] = _source.where(_source.user_frame(traceback.extract_stack()))
        return node

    cls.create_node = create_node
    _state["tracing"] = True
    try:
        yield
    finally:
        cls.create_node = original
        _state["tracing"] = False


def _clone(t):
    c = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
    c.copy_(t.detach())
    # A parameter stays one: torch.autograd.grad inside the function differentiates it.
    return c.requires_grad_(t.requires_grad)


_decompositions = {}


def _backward_decompositions():
    """The backward aten ops a training step's trace emits (threshold_backward,
    gelu_backward, native_layer_norm_backward, ...) that symmflow's library lacks,
    mapped to torch's own decompositions of them (torch._decomp): make_fx records
    the ops they are made of instead. An op symmflow has is kept as it is."""
    if not _decompositions:
        from torch._decomp import decomposition_table
        for op, fn in decomposition_table.items():
            full, short = _translate.op_name(op)
            if short.endswith(("_backward", "_backward_data")) and not _C.has_op(full) and not _C.has_op(short):
                _decompositions[op] = fn
    return _decompositions


def _arg_key(a):
    """What a compiled program depends on in one argument (the signature cache key)."""
    if isinstance(a, torch.Tensor):
        if a.device.type != "cpu":
            _tensors.check_cpu(a, "compiled function argument")
        sym = a.numel() > 0 and _C.is_symmetric_address(a.data_ptr())
        return ("T", a.shape, a.stride(), a.dtype, sym, a.storage_offset() if sym else 0, a.requires_grad)
    if isinstance(a, (int, float, bool, str, type(None))):
        return ("C", type(a).__name__, a)
    raise TypeError(f"compiled function argument of type {type(a).__name__}: pass tensors, numbers, strings or "
                    f"None (in tuples, lists or dicts)")


# Marks a flat output that is a graph output (a tensor), not a baked constant:
# None cannot, since a function may return None (a pipeline stage without a loss).
_GRAPH_OUTPUT = object()


class _Entry:
    """One compiled program: what it was traced from and how to call it."""

    def __init__(self, translation, out_spec, out_consts):
        self.translation = translation
        self.program = None  # compiled on first use (export needs only the translation)
        self.out_spec = out_spec
        self.out_consts = out_consts  # per flat output: _GRAPH_OUTPUT or a baked constant
        self.single = out_spec.type is None and out_consts == [_GRAPH_OUTPUT]  # the function returns one tensor


class CompiledFunction:
    def __init__(self, fn, name=None, overlap=True, max_in_flight=0, verify=False):
        self.fn = fn
        self.module = fn if isinstance(fn, torch.nn.Module) else None
        target = fn.forward if self.module is not None else fn
        self.name = "".join(c if c.isalnum() or c == "_" else "_" for c in (name or getattr(
            target, "__name__", None) or type(fn).__name__))
        if self.module is not None and self.name == "forward":
            self.name = type(fn).__name__
        self.options = dict(overlap=overlap, max_in_flight=max_in_flight, verify=verify)
        self._cache = {}

    # --- the state a module brings: parameters and buffers, by name ------------------
    def _state_tensors(self):
        if self.module is None:
            return [], []
        named = list(self.module.named_parameters()) + list(self.module.named_buffers())
        return [n for n, _ in named], [t for _, t in named]

    def _call_fn(self, state_names, state, args, kwargs):
        if self.module is None:
            return self.fn(*args, **kwargs)
        from torch.nn.utils.stateless import functional_call
        return functional_call(self.module, dict(zip(state_names, state)), tuple(args), kwargs)

    def _flat(self, args, kwargs):
        """(state names, state tensors, flat arguments, their pytree spec or None).
        Plain tensor arguments (the common call) skip torch's pytree: it costs
        more than the whole replay of a small program."""
        names, state = self._state_tensors()
        if not kwargs and all(isinstance(a, torch.Tensor) for a in args):
            return names, state, list(args), None
        flat, spec = pytree.tree_flatten((list(args), dict(kwargs)))
        return names, state, flat, spec

    def _prepare(self, args, kwargs):
        """The signature of a call and the tensors it binds, in graph input order."""
        names, state, flat, spec = self._flat(args, kwargs)
        key = (tuple(names), tuple(map(_arg_key, state)), tuple(map(_arg_key, flat)),
               len(flat) if spec is None else str(spec))
        return key, state + [a for a in flat if isinstance(a, torch.Tensor)]

    def signature(self, *args, **kwargs):
        return self._prepare(args, kwargs)[0]

    # --- tracing ----------------------------------------------------------------------
    def _trace(self, args, kwargs):
        names, state, flat, spec = self._flat(args, kwargs)
        if spec is None:
            flat, spec = pytree.tree_flatten((list(args), dict(kwargs)))
        tensor_pos = [i for i, a in enumerate(flat) if isinstance(a, torch.Tensor)]
        examples = [_clone(t) for t in state] + [_clone(flat[i]) for i in tensor_pos]
        n_state = len(state)
        out_info = {}

        def traced(*tensors):
            leaves = list(flat)
            for k, i in enumerate(tensor_pos):
                leaves[i] = tensors[n_state + k]
            a, kw = pytree.tree_unflatten(leaves, spec)
            out = self._call_fn(names, list(tensors[:n_state]), a, kw)
            out_flat, out_spec = pytree.tree_flatten(out)
            out_info["spec"] = out_spec
            out_info["consts"] = [_GRAPH_OUTPUT if isinstance(o, torch.Tensor) else o for o in out_flat]
            return [o for o in out_flat if isinstance(o, torch.Tensor)]

        try:
            with _recording_locations():
                gm = proxy_tensor.make_fx(traced, decomposition_table=_backward_decompositions(),
                                         tracing_mode="real")(*examples)
        except RuntimeError as e:
            if "get value out of a tracing tensor" in str(e) or "data-dependent" in str(e):
                where = _source.where(_source.user_frame(traceback.extract_tb(e.__traceback__)))
                raise _C.Error(f"{where}: data-dependent control flow (a Python branch or value that reads a "
                               f"tensor's contents) cannot be compiled: the program must be the same for every "
                               f"value of the inputs. Compute both sides with torch.where, or move the "
                               f"decision out of the compiled function.") from None
            raise
        _hoist.hoist_communication(gm)
        return gm, examples, out_info

    def _translate(self, args, kwargs):
        from . import init
        init()
        gm, examples, out_info = self._trace(args, kwargs)
        # The file is named per rank: errors name other ranks' ops by their file too,
        # and each rank can map only its own lines back to the user's source.
        tr = _translate.translate(gm, self.name, examples, f"{self.name}.rank{_C.rank()}.sf")
        return _Entry(tr, out_info["spec"], out_info["consts"])

    def _entry(self, args, kwargs, compiled=True, key=None):
        key = key if key is not None else self.signature(*args, **kwargs)
        e = self._cache.get(key)
        if e is None:
            e = self._translate(args, kwargs)
            self._cache[key] = e
        if compiled and e.program is None:
            tr = e.translation
            try:
                e.program = _C.Program(tr.text, tr.file, **self.options)
            except _C.Error as err:
                others = ()
                if "does not match across ranks" in str(err):
                    # Every rank raises this one (the matcher's contract), so the ranks can
                    # swap their line maps: each names the other ranks' ops by the user's line.
                    import json
                    maps = _C.all_gather_bytes(json.dumps([tr.file, tr.lines]).encode())
                    others = [_translate.Translation("", (), (), 0, {int(k): v for k, v in m[1].items()}, m[0])
                              for m in (json.loads(b) for b in maps)]
                raise _C.Error(tr.where(str(err), others)) from None
        return e

    def _sf_inputs(self, entry, args, kwargs, tensors=None):
        if tensors is None:
            tensors = self._prepare(args, kwargs)[1]
        # The signature already checked device and dtype: the unchecked conversion.
        ins = [_tensors.to_sf_checked_already(t if kind == "dense" else _tensors.flat_base(t))
               for t, (kind, _, _) in zip(tensors, entry.translation.inputs)]
        ins += [_tensors.to_sf(c) for c in entry.translation.consts]
        return ins

    def _outputs(self, entry, outs):
        if entry.single:
            return _tensors.from_sf(outs[0])
        it = iter(outs)
        flat = [_tensors.from_sf(next(it)) if c is _GRAPH_OUTPUT else c for c in entry.out_consts]
        return pytree.tree_unflatten(flat, entry.out_spec)

    # --- the user's API -----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if any(isinstance(a, np.ndarray) for a in args):  # numpy arrays share memory with torch
            args = tuple(torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in args)
        key, tensors = self._prepare(args, kwargs)
        e = self._entry(args, kwargs, key=key)
        return self._outputs(e, e.program.run(self._sf_inputs(e, args, kwargs, tensors)))

    def explain(self, *args, **kwargs):
        """What `symmflow run --explain` prints for the program these arguments compile to."""
        return self._entry(args, kwargs).program.explain()

    def sf_text(self, *args, **kwargs):
        """The traced program as .sf (this rank's); traces, does not compile."""
        return self._entry(args, kwargs, compiled=False).translation.text

    def ir(self, *args, **kwargs):
        """The compiled IR (after the whole pipeline)."""
        return self._entry(args, kwargs).program.ir()

    def stats(self, *args, **kwargs):
        return self._entry(args, kwargs).program.stats()

    def run_eager_sf(self, *args, **kwargs):
        """symmflow's own eager interpreter on this rank's .sf, on these arguments: the
        reference a compiled run equals bitwise (tests)."""
        e = self._entry(args, kwargs, compiled=False)
        outs = _C.run_eager_sf(e.translation.text, e.translation.file, self._sf_inputs(e, args, kwargs))
        return self._outputs(e, outs)

    @property
    def programs(self):
        return len(self._cache)
