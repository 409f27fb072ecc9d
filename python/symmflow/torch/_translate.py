"""A make_fx graph (aten ops) as symmflow's text IR (.sf), one statement per aten call.

make_fx already gives the graph symmflow compiles: PyTorch's op names and
schemas are symmflow's. The translation only spells it in .sf (docs/ir.md):

    %mm = torch.ops.aten.mm.default(%x_1, %w_1)            # FX
    %mm = aten::mm(%x_1, %w_1)  # model.py:12: y = x @ w   # .sf

- placeholders become graph inputs; a strided input arrives as the contiguous
  1-D memory it spans and is re-created with aten::as_strided (graph inputs of
  .sf are contiguous), so nothing is copied at the boundary;
- tensor constants (get_attr) become extra graph inputs, bound at each call;
- ``torch.ops.symmflow.X`` (symmflow's c10d ops in torch) is written ``c10d::X``;
- a Python number where the schema wants a Tensor (a "wrapped number":
  ``aten.div.Tensor(x, 2.0)``) drops the overload, so symmflow picks the Scalar
  one, as PyTorch's type promotion treats it;
- ``aten._unsafe_view`` (matmul's reshape of a fresh product) is written
  ``aten::reshape``: the same values, and a view instead of a copy;
- ``aten.scalar_tensor`` (the 0-dim constants of torch's decompositions) is
  written ``aten::full([], value)``;
- device / layout / pin_memory arguments are dropped (CPU only); anything else
  symmflow's schema lacks is an error naming the op and the user's line.

Each statement ends with a comment naming the user's source line, and
``Translation.where(sf_line)`` maps errors that name a .sf line back to it.
"""
import json
import math
import operator
import re

import torch

from .. import _C
from . import _ops, _tensors

_DROPPED_KWARGS = {"device", "pin_memory", "layout"}


class Translation:
    """The .sf text of one traced program and how its inputs bind."""

    def __init__(self, text, inputs, consts, outputs, lines, file):
        self.text = text
        self.inputs = inputs    # per placeholder: ("dense"|"strided", shape, stride)
        self.consts = consts    # tensor constants bound after the placeholders
        self.outputs = outputs  # number of graph outputs
        self.lines = lines      # .sf line number -> "file.py:12"
        self.file = file

    def where(self, message, others=()):
        """message with every `FILE:L:C` of this program (and of the other ranks'
        translations given) followed by the user's line."""
        for tr in (self, *[o for o in others if o.file != self.file]):
            def add(m, tr=tr):
                loc = tr.lines.get(int(m.group(1)))
                return f"{m.group(0)} ({loc})" if loc else m.group(0)
            message = re.sub(re.escape(tr.file) + r":(\d+):\d+", add, message)
        return message


def _fmt_float(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    r = repr(float(v))
    return r if ("." in r or "e" in r) else r + ".0"


def _type_of(meta):
    shape = ", ".join(str(int(s)) for s in meta.shape)
    return f"{_tensors.dtype_name(meta.dtype)}[{shape}]"


def _meta(node):
    m = node.meta.get("tensor_meta")
    if m is None and "val" in node.meta:
        m = node.meta["val"]
    return m


class _Unsupported(_C.Error):
    pass


def _loc(node):
    return node.meta.get("sf_loc", "<unknown location>")


def op_name(target):
    """symmflow's full and short op names for an OpOverload ("aten::add.Tensor", "aten::add")."""
    ns = target.namespace
    sf_ns = _ops.SF_NAMESPACE.get(ns, ns)
    name = target._schema.name.split("::", 1)[1]
    overload = target._overloadname
    full = f"{sf_ns}::{name}" + ("" if overload == "default" else f".{overload}")
    return full, f"{sf_ns}::{name}"


def translate(gm, name, example_inputs, file):
    """gm: a make_fx GraphModule; example_inputs: the tensors it was traced with."""
    g = gm.graph
    names = {}
    params, prologue, body, out_types = [], [], [], []
    inputs, consts, lines = [], [], {}
    ph = 0

    def value(a, node):
        if isinstance(a, torch.fx.Node):
            if a not in names:
                raise _C.Error(f"{_loc(node)}: {a.name} is used before symmflow's translation defined it")
            return names[a]
        if isinstance(a, bool):
            return "true" if a else "false"
        if isinstance(a, int):
            return str(a)
        if isinstance(a, float):
            return _fmt_float(a)
        if isinstance(a, str):
            return json.dumps(a)
        if a is None:
            return "None"
        if isinstance(a, (list, tuple)):
            return "[" + ", ".join(value(x, node) for x in a) + "]"
        if isinstance(a, torch.dtype):
            return _tensors.dtype_name(a)
        if isinstance(a, torch.memory_format):
            return "None"
        raise _Unsupported(f"{_loc(node)}: an argument of type {type(a).__name__} ({a!r}) cannot be passed to a "
                           f"symmflow op")

    getitems = {}  # multi-result node -> {index: getitem node}
    for n in g.nodes:
        if n.op == "call_function" and n.target is operator.getitem:
            getitems.setdefault(n.args[0], {})[n.args[1]] = n

    for n in g.nodes:
        if n.op == "placeholder":
            t = example_inputs[ph]
            ph += 1
            if not isinstance(t, torch.Tensor):
                raise _C.Error(f"input {n.name}: only tensors become graph inputs (got {type(t).__name__})")
            ty = f"{_tensors.dtype_name(t.dtype)}[{', '.join(str(s) for s in t.shape)}]"
            if _tensors.is_dense(t):
                params.append(f"%{n.name}: {ty}")
                inputs.append(("dense", tuple(t.shape), tuple(t.stride())))
            else:
                base = f"{n.name}_base"
                params.append(f"%{base}: {_tensors.dtype_name(t.dtype)}[{_tensors.extent(t)}]")
                prologue.append(f"  %{n.name} = aten::as_strided(%{base}, {list(t.shape)}, {list(t.stride())}, 0)")
                inputs.append(("strided", tuple(t.shape), tuple(t.stride())))
            names[n] = f"%{n.name}"
        elif n.op == "get_attr":
            t = getattr(gm, n.target)
            if not isinstance(t, torch.Tensor):
                raise _C.Error(f"{_loc(n)}: a constant of type {type(t).__name__} cannot be a symmflow input")
            t = t.contiguous()
            consts.append(t)
            params.append(f"%{n.name}: {_tensors.dtype_name(t.dtype)}[{', '.join(str(s) for s in t.shape)}]")
            names[n] = f"%{n.name}"
        elif n.op == "call_function":
            if n.target is operator.getitem:
                continue  # named by its producer's statement
            if not isinstance(n.target, torch._ops.OpOverload):
                raise _Unsupported(f"{_loc(n)}: {n.target} is not an aten op; symmflow compiles aten, c10d and "
                                   f"symm_mem ops only")
            full, short = op_name(n.target)
            if full == "aten::is_same_size" and not n.users:
                continue  # torch.autograd.grad's check of grad_outputs: shapes, answered while tracing
            if full == "aten::_unsafe_view":
                # matmul's reshape of a fresh result (bmm's, mm's): PyTorch skips alias
                # tracking because nothing else sees the input. aten::reshape gives the
                # same values and is a view here (the input is contiguous), where
                # symmflow's _unsafe_view, planned by its schema, must copy.
                full = short = "aten::reshape"
            sizes = []
            if full == "aten::scalar_tensor":
                # torch's decompositions make their 0-dim constants with it (threshold_backward's
                # where): aten::full with no sizes is the same tensor.
                full = short = "aten::full"
                sizes = ["[]"]
            if not _C.has_op(full):
                if _C.has_op(short):
                    full = short
                else:
                    raise _Unsupported(f"{_loc(n)}: {full} is not an op symmflow has (used by {n.name}); "
                                       f"`symmflow ops aten` lists the ones it has")
            schema = n.target._schema
            wrapped = False
            args = sizes
            for i, a in enumerate(n.args):
                if i < len(schema.arguments) and isinstance(a, (int, float)) and not isinstance(a, bool) \
                        and str(schema.arguments[i].type) == "Tensor":
                    wrapped = True
                args.append(value(a, n))
            for k, v in n.kwargs.items():
                if k in _DROPPED_KWARGS:
                    if k == "device" and v is not None and torch.device(v).type != "cpu":
                        raise _C.Error(f"{_loc(n)}: {full} on device {v}; symmflow runs on CPU")
                    continue
                if k == "memory_format" and v in (None, torch.contiguous_format, torch.preserve_format):
                    continue
                args.append(f"{k}={value(v, n)}")
            if wrapped:
                full = short
            results = schema.returns
            if len(results) == 0:
                lhs = ""
            elif len(results) == 1 and str(results[0].type) != "List[Tensor]" and "[]" not in str(results[0].type):
                lhs = f"%{n.name} = "
                names[n] = f"%{n.name}"
            else:
                m = _meta(n)
                if isinstance(m, (list, tuple)):
                    count = len(m)
                elif len(results) > 1:
                    count = len(results)
                else:  # a Tensor[] without metadata: as long as the Tensor[] it is made from
                    lists = [a for a in n.args if isinstance(a, (list, tuple)) and a and
                             all(isinstance(x, torch.fx.Node) for x in a)]
                    count = len(lists[0]) if lists else 1 + max(getitems.get(n, {0: None}))
                outs = []
                for i in range(count):
                    gi = getitems.get(n, {}).get(i)
                    nm = gi.name if gi is not None else f"{n.name}_{i}"
                    outs.append(f"%{nm}")
                    if gi is not None:
                        names[gi] = f"%{nm}"
                lhs = ", ".join(outs) + " = "
            body.append((f"  {lhs}{full}({', '.join(args)})", _loc(n)))
        elif n.op == "output":
            flat = n.args[0]
            rets = []
            for o in (flat if isinstance(flat, (list, tuple)) else [flat]):
                if not isinstance(o, torch.fx.Node):
                    raise _C.Error(f"output {o!r}: only tensors can be returned from a compiled program")
                rets.append(names[o])
                m = _meta(o)
                out_types.append(_type_of(m))
        else:
            raise _Unsupported(f"{_loc(n)}: FX node kind {n.op} ({n.target}) cannot be translated")

    head = f"graph @{name}({', '.join(params)}) -> ({', '.join(out_types)}) {{"
    text = ["# traced from Python by symmflow.torch (make_fx); one statement per aten call", head]
    text += prologue
    for stmt, loc in body:
        text.append(f"{stmt}  # {loc}")
        lines[len(text)] = loc
    text.append(f"  return {', '.join(rets)}")
    text.append("}")
    return Translation("\n".join(text) + "\n", inputs, consts, len(rets), lines, file)
