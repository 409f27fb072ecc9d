#!/usr/bin/python3
"""Conformance of symmflow's ops with PyTorch (Debian's python3-torch, CPU, gloo).

    /usr/bin/python3 tests/torch/conformance.py [--symmflow build/dev/symmflow] [-j 2]
                                               [-k SUBSTR] [--list] [--keep DIR]

Generates one small `.sf` program per case (every aten op symmflow registers,
across dtypes, type promotion, broadcasting, special values, views, in-place and
out= forms, and the inputs PyTorch refuses), runs it with
`symmflow run --nproc 1 --mode eager` and with tests/torch/sf_torch.py (in this
process), and compares dtype, shape and values. `--mode compiled` must equal
`--mode eager` bitwise. Multi-rank programs (tests/torch/programs, tests/diff,
examples) run at the world sizes their `# nproc:` line names (default 2).
See tests/torch/README.md for what is compared and with which tolerance.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import numpy as np
    import torch
except ImportError:  # the PATH's python may not be Debian's: re-run under it
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") and \
            os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import sf_torch  # noqa: E402
import conformance_nn  # noqa: E402

warnings.filterwarnings("ignore")

# ---------------------------------------------------------------------------
# tolerance classes

EXACT, PM0, ULP, REL, SHAPE = "exact", "exact±0", "ulp", "rel", "shape"
_RANK = {EXACT: 0, PM0: 1, ULP: 2, REL: 3, SHAPE: 4}
ULP_MAX = 4
RTOL = {"f32": 1e-5, "f64": 1e-5, "bf16": 1e-2, "f16": 1e-2}

ULP_OPS = {"exp", "log", "sin", "cos", "tanh", "sigmoid", "gelu", "pow", "rsqrt", "silu", "erf",
           "elu", "softplus", "elu_", "log1p", "expm1", "log2", "log1p_", "expm1_", "log2_", "exp_", "log_", "sin_", "cos_", "tanh_", "sigmoid_", "gelu_", "pow_", "rsqrt_", "silu_", "erf_"}
# softmax, log_softmax, layer_norm and var/std sum a row: their rounding depends on
# the summation order (layer_norm, var, std: PyTorch's Welford pass, symmflow's two)
REL_OPS = {"sum", "mean", "mm", "bmm", "matmul", "addmm", "linear", "softmax", "log_softmax",
           "_softmax", "_log_softmax", "native_layer_norm", "layer_norm", "baddbmm",
           "var", "std", "var_mean", "std_mean", "nll_loss_forward", "mse_loss", "cumsum", "norm", "logsumexp"}
# PyTorch's own maximum/minimum return either zero for (0.0, -0.0) depending on
# whether its kernel is vectorised (tensor size and layout): -0.0 == 0.0 there
PM0_OPS = {"maximum", "minimum"}
REDUCING_COLLECTIVES = {
    "c10d::all_reduce", "c10d::all_reduce_", "c10d::all_reduce_coalesced",
    "c10d::all_reduce_coalesced_", "c10d::reduce_scatter_tensor",
    "c10d::reduce_scatter_tensor_coalesced", "symm_mem::multimem_all_reduce_",
    "symm_mem::multimem_one_shot_all_reduce", "symm_mem::multimem_one_shot_all_reduce_out",
    "symm_mem::one_shot_all_reduce", "symm_mem::one_shot_all_reduce_out",
    "symm_mem::one_shot_all_reduce_copy", "symm_mem::one_shot_all_reduce_copy_out",
    "symm_mem::two_shot_all_reduce_", "symm_mem::two_shot_all_reduce_out",
    "symm_mem::reduce_scatter_out", "symm_mem::tile_reduce"}
VIEW_OPS = {"view", "reshape", "slice", "select", "narrow", "transpose", "t", "permute", "expand",
            "unsqueeze", "squeeze", "flatten", "alias", "as_strided", "contiguous",
            "_reshape_alias", "detach", "split", "split_with_sizes", "chunk", "unbind"}
# symmflow's ops that PyTorch cannot reproduce
NOT_COMPARABLE = {"aten::rand": "seeded random factory (symmflow's own generator; PyTorch's "
                                "rand has no seed argument)",
                  "aten::randn": "seeded random factory (symmflow's own generator)"}


def op_class(op):
    ns, rest = op.split("::", 1)
    name = rest.split(".")[0]
    if ns == "aten":
        if name in ULP_OPS:
            return ULP
        if name in REL_OPS:
            return REL
        if name in PM0_OPS:
            return PM0
        return EXACT
    return REL if op in REDUCING_COLLECTIVES else EXACT


def _mutates_or_aliases(op, kwnames):
    ns, rest = op.split("::", 1)
    name, _, overload = rest.partition(".")
    if ns != "aten":
        return "!" in sf_torch.DIST_SCHEMAS[[s.split("(")[0] for s in sf_torch.DIST_SCHEMAS].index(op)] \
            or name in ("wait_tensor", "isend")
    return name.endswith("_") or name in VIEW_OPS or overload == "out" or "out" in kwnames


def output_classes(g):
    """Tolerance class of every returned value and every tensor input of a program:
    the loosest class of the ops upstream of it, through aliases (views, in-place,
    out= and P2P results share a class with their arguments)."""
    parent = {}

    def find(v):
        while parent.setdefault(v, v) != v:
            v = parent[v]
        return v

    def union(a, b):
        parent[find(a)] = find(b)
    cls = {}

    def values(e):
        if e[0] == "value":
            yield e[1]
        elif e[0] == "list":
            for x in e[1]:
                yield from values(x)

    def get(v):
        return cls.get(find(v), EXACT)

    def put(v, c):
        r = find(v)
        if _RANK[c] > _RANK[cls.get(r, EXACT)]:
            cls[r] = c
    for s in g.stmts:
        args = [v for _, e in s.args for v in values(e)]
        c = op_class(s.op)
        for v in args:
            if _RANK[get(v)] > _RANK[c]:
                c = get(v)
        res = [r.text for r in s.results]
        if _mutates_or_aliases(s.op, [k for k, _ in s.args if k]):
            for v in args + res:
                union(v, (args + res)[0])
            # re-read the merged class
            for v in args + res:
                if _RANK[get(v)] > _RANK[c]:
                    c = get(v)
            for v in args + res:
                put(v, c)
        else:
            for r in res:
                put(r, c)
    outs = [get(v.text) for v in g.ret_values]
    ins = {name[1:]: get(name) for name, _ in g.params}
    return outs, ins


# ---------------------------------------------------------------------------
# special values

def _f(vals, dtype):
    t = torch.tensor(vals, dtype=torch.float64).to(sf_torch.DTYPES[dtype])
    return sf_torch.tensor_to_numpy(t)


SPECIAL = {
    "f32": [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-40, -1.4e-45, 1.0, -1.0, 0.5,
            -2.5, 3.0, 1e-3, 3e38, 89.0, -104.0],
    "f64": [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 5e-324, -1e-310, 1.0, -1.0, 0.5,
            -2.5, 3.0, 1e-3, 1e308, 710.0, -746.0],
    "f16": [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 6e-8, -3e-5, 1.0, -1.0, 0.5,
            -2.5, 3.0, 1e-3, 65504.0, 11.1, -17.5],
    "bf16": [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1e-39, -9.2e-41, 1.0, -1.0, 0.5,
             -2.5, 3.0, 1e-3, 3e38, 89.0, -104.0],
    "i32": [0, 1, -1, 2, -2, 7, -7, 100, -100, 2147483647, -2147483648, 65536, -65536, 46341, 3, -3],
    "i64": [0, 1, -1, 2, -2, 7, -7, 100, -100, 2 ** 63 - 1, -2 ** 63, 2 ** 32, -2 ** 32, 3037000500, 3, -3],
    "bool": [True, False, True, False, False, True, True, False, True, True, False, False, True,
             False, True, False],
}
# nonzero divisors without the (INT_MIN, -1) pair, for integer floor/trunc division
INT_NUM = {"i32": [0, 1, -1, 7, -7, 13, -13, 100, -100, 2147483647, -2147483647, 65536],
           "i64": [0, 1, -1, 7, -7, 13, -13, 100, -100, 2 ** 63 - 1, -2 ** 63 + 1, 2 ** 40]}
INT_DEN = [1, -1, 2, -2, 3, -3, 7, -7]


def special_array(dtype, shape=None, values=None):
    vals = values if values is not None else SPECIAL[dtype]
    if dtype in ("f32", "f64", "f16", "bf16"):
        a = _f(vals, dtype)
    elif dtype == "bool":
        a = np.array(vals, dtype=bool)
    else:
        a = np.array(vals, dtype=np.int32 if dtype == "i32" else np.int64)
    return a.reshape(shape) if shape else a


# ---------------------------------------------------------------------------
# cases

class Case:
    def __init__(self, op, name, text=None, params=None, body=None, rets=None, inputs=None,
                 tol=EXACT, nproc=1, path=None):
        self.op, self.name = op, name
        self.text, self.params, self.body, self.rets = text, params, body, rets
        self.inputs = inputs or {}
        self.tol, self.nproc, self.path = tol, nproc, path
        self.result = None       # "pass" | "fail" | "skip"
        self.detail = ""
        self.notes = []          # remarks on a passing comparison (see compare_arrays)
        self.alt2x = None        # PyTorch 2.x's result where 1.13 differs (see alt_scalar_opmath)

    def template(self):
        ps = ", ".join("%%%s: %s" % (n, t) for n, t in self.params)
        return "graph @case(%s) -> (%s) {\n%s\n  return %s\n}\n" % (
            ps, "{RETS}", "\n".join("  " + b for b in self.body),
            ", ".join("%" + r for r in self.rets))


def shape_str(shape):
    return "[%s]" % ", ".join(str(s) for s in shape)


def T(dtype, *shape):
    return "%s%s" % (dtype, shape_str(shape))


class Gen:
    def __init__(self):
        self.cases = []
        self.names = set()

    def add(self, op, name, params, body, rets, inputs=None, tol=None):
        if isinstance(body, str):
            body = [body]
        if isinstance(rets, str):
            rets = [rets]
        base = "%s/%s" % (op, name)
        n, k = base, 2
        while n in self.names:
            n, k = "%s#%d" % (base, k), k + 1
        self.names.add(n)
        self.cases.append(Case(op, n, params=params, body=body, rets=rets, inputs=inputs,
                               tol=tol if tol is not None else op_class(op)))


FLOATS = ["f32", "f64", "bf16", "f16"]
INTS = ["i32", "i64"]
ALL = FLOATS + INTS + ["bool"]
PROMO_PAIRS = [("i32", "f32"), ("i64", "f16"), ("bf16", "f16"), ("f32", "f64"), ("bool", "i32"),
               ("i32", "i64"), ("bf16", "i64"), ("f16", "f32"), ("bool", "bf16"), ("i64", "f64")]


def alt_scalar_opmath(case):
    """PyTorch >= 2.1 multiplies/divides a bf16/f16 tensor by a Python float in float32
    (BinaryOpsKernel.cpp: iter.original_scalar_value<opmath_t>), 1.13 first rounds
    the scalar to bf16/f16."""
    g = sf_torch.parse(case.text)
    s = g.stmts[0]
    arr, dname = sf_torch.load_npy(os.path.join(case.dir, "pt", "x.rank0.npy"))
    x = sf_torch.numpy_to_tensor(arr, dname)
    scalar = s.args[1][1][1]
    f = x.float() * np.float32(scalar) if "mul" in s.op else x.float() / np.float32(scalar)
    return sf_torch.tensor_to_numpy(f.to(x.dtype))


def _reduced_in_float(case, dtype):
    """The case's program with `dtype` (bf16/f16) replaced by f32, its first result
    rounded back to `dtype`."""
    text = re.sub(r"\b%s\b" % dtype, "f32", case.text)
    in_dir = None
    if case.in_dir:
        in_dir = os.path.join(case.dir, "in_f32")
        os.makedirs(in_dir, exist_ok=True)
        for n, arr in case.inputs.items():
            if _dtype_name(arr) == dtype:
                arr = _float_view(arr, dtype).astype(np.float32)
            np.save(os.path.join(in_dir, n + ".npy"), arr)
    out = os.path.join(case.dir, "pt_f32")
    rc, err = sf_torch.run_program(text, 1, 0, in_dir, out)
    if rc != 0:
        return None
    f = torch.from_numpy(np.load(os.path.join(out, "out0.rank0.npy")))
    return sf_torch.tensor_to_numpy(f.to(sf_torch.DTYPES[dtype]))


def alt_bf16_in_float(case):
    """PyTorch >= 2.0 computes bf16 gelu in float and rounds once (Activation.cpp,
    GeluKernelImpl's kBFloat16 branch); 1.13 computes it in bf16 arithmetic."""
    return _reduced_in_float(case, "bf16")


def alt_mean_in_float(case):
    """PyTorch 2.x computes the mean of bf16/f16 as cast to f32 -> sum -> divide ->
    cast back (ReduceOps.cpp, mean_out); 1.13 rounds the sum to bf16/f16 before
    dividing (so a sum past the dtype's range is inf)."""
    d = "bf16" if any(t.startswith("bf16") for _, t in case.params) else "f16"
    return _reduced_in_float(case, d)


def alt_as_strided_scatter(case):
    """PyTorch 2.x's as_strided_scatter clones self with its whole storage and its
    storage offset (clone_preserve_strides), so storage_offset counts from the
    start of the base's storage; 1.13 clones self compactly (offset 0)."""
    out = os.path.join(case.dir, "pt_2x")
    sf_torch.AS_STRIDED_SCATTER_2X = True
    try:
        rc, err = sf_torch.run_program(case.text, 1, 0, case.in_dir, out)
    finally:
        sf_torch.AS_STRIDED_SCATTER_2X = False
    if rc != 0:
        return None
    return np.load(os.path.join(out, "out0.rank0.npy"))


def gen_binary(g):
    arith = ["add", "sub", "mul", "div", "maximum", "minimum", "pow"]
    cmps = ["eq", "ne", "lt", "le", "gt", "ge"]
    for op in arith + cmps:
        key_t = "aten::%s%s" % (op, "" if op in ("maximum", "minimum") else
                                (".Tensor_Tensor" if op == "pow" else ".Tensor"))
        for d in ALL:
            g.add(key_t, "dtype-" + d, [("x", T(d, 2, 3)), ("y", T(d, 2, 3))],
                  "%%r = aten::%s(%%x, %%y)" % op, "r")
        for d in FLOATS + INTS:
            g.add(key_t, "special-" + d, [("x", T(d, 16, 1)), ("y", T(d, 1, 16))],
                  "%%r = aten::%s(%%x, %%y)" % op, "r",
                  inputs={"x": special_array(d, [16, 1]), "y": special_array(d, [1, 16])})
        for a, b in PROMO_PAIRS:
            g.add(key_t, "promote-%s-%s" % (a, b), [("x", T(a, 2, 3)), ("y", T(b, 2, 3))],
                  "%%r = aten::%s(%%x, %%y)" % op, "r")
        # 0-dim tensors take part in promotion only by category
        for a, b in [("f16", "f64"), ("i32", "f64"), ("i64", "i32"), ("bool", "f32"), ("bf16", "i64")]:
            g.add(key_t, "zerodim-%s-%s" % (a, b), [("x", T(a, 2, 3)), ("y", T(b))],
                  "%%r = aten::%s(%%x, %%y)" % op, "r")
        g.add(key_t, "zerodim-both", [("x", T("f16")), ("y", T("f32"))],
              "%%r = aten::%s(%%x, %%y)" % op, "r")
        # broadcasting
        g.add(key_t, "broadcast-3d", [("x", T("f32", 2, 1, 3)), ("y", T("f32", 4, 1))],
              "%%r = aten::%s(%%x, %%y)" % op, "r")
        g.add(key_t, "broadcast-rank", [("x", T("i64", 3)), ("y", T("i64", 2, 3))],
              "%%r = aten::%s(%%x, %%y)" % op, "r")
        g.add(key_t, "broadcast-mismatch", [("x", T("f32", 4)), ("y", T("f32", 3))],
              "%%r = aten::%s(%%x, %%y)" % op, "r")
        g.add(key_t, "broadcast-mismatch-2d", [("x", T("f32", 2, 3)), ("y", T("f32", 3, 2))],
              "%%r = aten::%s(%%x, %%y)" % op, "r")
        # non-contiguous operands
        g.add(key_t, "strided", [("x", T("f32", 3, 4)), ("y", T("f32", 4, 3))],
              ["%xt = aten::t(%x)", "%%r = aten::%s(%%xt, %%y)" % op], "r")
        # Python scalars
        if op == "pow":
            continue
        key_s = "aten::%s%s" % (op, "" if op in ("maximum", "minimum") else ".Scalar")
        if op in ("maximum", "minimum"):
            continue
        for d in ["f32", "bf16", "f16", "i32", "i64", "bool"]:
            for sv, sn in [("2.5", "float"), ("3", "int"), ("true", "bool"), ("-0.0", "negzero"),
                           ("0.1", "inexact")]:
                g.add(key_s, "scalar-%s-%s" % (d, sn), [("x", T(d, 2, 3))],
                      "%%r = aten::%s(%%x, %s)" % (op, sv), "r")
                if op in ("mul", "div") and d in ("bf16", "f16") and sn == "inexact":
                    g.cases[-1].alt2x = alt_scalar_opmath
        for d in ["f32", "f64"]:
            for sv, sn in [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf")]:
                g.add(key_s, "scalar-%s-%s" % (d, sn), [("x", T(d, 16))],
                      "%%r = aten::%s(%%x, %s)" % (op, sv), "r", inputs={"x": special_array(d)})
        g.add(key_s, "scalar-i64-big", [("x", T("i32", 2, 3))],
              "%%r = aten::%s(%%x, 4294967296)" % op, "r")
        g.add(key_s, "scalar-input-f64", [("x", T("f32", 2, 3)), ("s", "f64")],
              "%%r = aten::%s(%%x, %%s)" % op, "r")
        g.add(key_s, "scalar-input-i64", [("x", T("i32", 2, 3)), ("s", "i64")],
              "%%r = aten::%s(%%x, %%s)" % op, "r")

    # alpha
    for op in ["add", "sub"]:
        for d, alpha in [("f32", "2"), ("f32", "0.5"), ("bf16", "1.5"), ("i64", "3"), ("i32", "1.5"),
                         ("bool", "2"), ("bool", "true"), ("f16", "-2"), ("f64", "nan")]:
            g.add("aten::%s.Tensor" % op, "alpha-%s-%s" % (d, alpha), [("x", T(d, 2, 3)), ("y", T(d, 2, 3))],
                  "%%r = aten::%s(%%x, %%y, alpha=%s)" % (op, alpha), "r")
        g.add("aten::%s.Scalar" % op, "alpha-positional", [("x", T("f32", 2, 3))],
              "%%r = aten::%s(%%x, 2, 3)" % op, "r")
        g.add("aten::%s.Scalar" % op, "alpha-float-int", [("x", T("i64", 2, 3))],
              "%%r = aten::%s(%%x, 2, 0.5)" % op, "r")
        g.add("aten::%s.Tensor" % op, "explicit-overload", [("x", T("f32", 2, 3)), ("y", T("f32", 3))],
              "%%r = aten::%s.Tensor(%%x, %%y, alpha=-1)" % op, "r")
    g.add("aten::sub.Tensor", "bool-bool", [("x", T("bool", 4)), ("y", T("bool", 4))],
          "%r = aten::sub(%x, %y)", "r")
    g.add("aten::sub.Scalar", "bool-true", [("x", T("bool", 4))], "%r = aten::sub(%x, true)", "r")

    # division: rounding modes
    for d in FLOATS:
        for mode in ["floor", "trunc"]:
            g.add("aten::div.Tensor_mode", "%s-%s-special" % (mode, d), [("x", T(d, 16, 1)), ("y", T(d, 1, 16))],
                  '%%r = aten::div(%%x, %%y, rounding_mode="%s")' % mode, "r",
                  inputs={"x": special_array(d, [16, 1]), "y": special_array(d, [1, 16])})
            g.add("aten::div.Tensor_mode", "%s-%s" % (mode, d), [("x", T(d, 2, 3)), ("y", T(d, 2, 3))],
                  '%%r = aten::div(%%x, %%y, rounding_mode="%s")' % mode, "r")
            g.add("aten::div.Scalar_mode", "%s-%s" % (mode, d), [("x", T(d, 2, 3))],
                  '%%r = aten::div(%%x, -2.5, rounding_mode="%s")' % mode, "r")
        g.add("aten::div.Tensor_mode", "none-" + d, [("x", T(d, 2, 3)), ("y", T(d, 2, 3))],
              "%r = aten::div(%x, %y, rounding_mode=None)", "r")
    for d in INTS:
        for mode in ["floor", "trunc"]:
            g.add("aten::div.Tensor_mode", "%s-%s" % (mode, d), [("x", T(d, 12, 1)), ("y", T(d, 1, 8))],
                  '%%r = aten::div(%%x, %%y, rounding_mode="%s")' % mode, "r",
                  inputs={"x": special_array(d, [12, 1], INT_NUM[d]), "y": special_array(d, [1, 8], INT_DEN)})
            g.add("aten::div.Tensor_mode", "%s-%s-by-zero" % (mode, d), [("x", T(d, 3)), ("y", T(d, 3))],
                  '%%r = aten::div(%%x, %%y, rounding_mode="%s")' % mode, "r",
                  inputs={"x": special_array(d, None, [1, 2, 3]), "y": special_array(d, None, [1, 0, 2])})
            g.add("aten::div.Scalar_mode", "%s-%s" % (mode, d), [("x", T(d, 2, 3))],
                  '%%r = aten::div(%%x, 3, rounding_mode="%s")' % mode, "r")
            g.add("aten::div.Scalar_mode", "%s-%s-float" % (mode, d), [("x", T(d, 2, 3))],
                  '%%r = aten::div(%%x, 2.5, rounding_mode="%s")' % mode, "r")
        g.add("aten::div.Tensor", "true-%s-by-zero" % d, [("x", T(d, 3)), ("y", T(d, 3))],
              "%r = aten::div(%x, %y)", "r",
              inputs={"x": special_array(d, None, [1, 0, -3]), "y": special_array(d, None, [0, 0, 0])})
    g.add("aten::div.Tensor_mode", "bad-mode", [("x", T("f32", 3)), ("y", T("f32", 3))],
          '%r = aten::div(%x, %y, rounding_mode="round")', "r")
    g.add("aten::div.Tensor_mode", "bool-floor", [("x", T("bool", 3)), ("y", T("bool", 3))],
          '%r = aten::div(%x, %y, rounding_mode="floor")', "r")

    # pow specifics
    for d in FLOATS + INTS:
        for e, en in [("2", "2"), ("0.5", "half"), ("3", "3"), ("-1", "neg1"), ("0", "0"), ("-2.5", "neg2.5")]:
            g.add("aten::pow.Tensor_Scalar", "%s-%s" % (d, en), [("x", T(d, 2, 3))],
                  "%%r = aten::pow(%%x, %s)" % e, "r")
    for d in FLOATS:
        g.add("aten::pow.Tensor_Scalar", "special-%s" % d, [("x", T(d, 16))],
              "%r = aten::pow(%x, 0.5)", "r", inputs={"x": special_array(d)})
    for d in ["f32", "i64", "bf16", "bool"]:
        for b in ["2.0", "2", "-0.5"]:
            g.add("aten::pow.Scalar", "%s-base%s" % (d, b), [("x", T(d, 2, 3))],
                  "%%r = aten::pow(%s, %%x)" % b, "r")
    g.add("aten::pow.Tensor_Tensor", "int-negative-exponent", [("x", T("i64", 4)), ("y", T("i64", 4))],
          "%r = aten::pow(%x, %y)", "r",
          inputs={"x": special_array("i64", None, [2, -2, 1, 0]), "y": special_array("i64", None, [-1, -1, -3, 2])})
    g.add("aten::pow.Tensor_Tensor", "int-overflow", [("x", T("i32", 4)), ("y", T("i32", 4))],
          "%r = aten::pow(%x, %y)", "r",
          inputs={"x": special_array("i32", None, [3, -3, 7, 2]), "y": special_array("i32", None, [40, 41, 13, 31])})

    # where
    for d in ALL:
        g.add("aten::where.self", "dtype-" + d, [("c", T("bool", 2, 3)), ("x", T(d, 2, 3)), ("y", T(d, 2, 3))],
              "%r = aten::where(%c, %x, %y)", "r")
    for a, b in [("f32", "f64"), ("i32", "f16"), ("bool", "i64"), ("bf16", "f16")]:
        g.add("aten::where.self", "promote-%s-%s" % (a, b),
              [("c", T("bool", 2, 3)), ("x", T(a, 2, 3)), ("y", T(b, 2, 3))], "%r = aten::where(%c, %x, %y)", "r")
    g.add("aten::where.self", "broadcast", [("c", T("bool", 2, 1)), ("x", T("f32", 3)), ("y", T("f32", 1, 1))],
          "%r = aten::where(%c, %x, %y)", "r")
    g.add("aten::where.self", "cond-not-bool", [("c", T("i64", 3)), ("x", T("f32", 3)), ("y", T("f32", 3))],
          "%r = aten::where(%c, %x, %y)", "r")
    g.add("aten::where.self", "mismatch", [("c", T("bool", 3)), ("x", T("f32", 4)), ("y", T("f32", 3))],
          "%r = aten::where(%c, %x, %y)", "r")
    g.add("aten::where.self", "special", [("c", T("bool", 16)), ("x", T("f32", 16)), ("y", T("f32", 16))],
          "%r = aten::where(%c, %x, %y)", "r",
          inputs={"c": special_array("bool"), "x": special_array("f32"), "y": special_array("f32")[::-1].copy()})
    for d in ["f32", "i32", "bf16", "bool"]:
        for s in ["2.5", "7", "false"]:
            g.add("aten::where.ScalarOther", "%s-%s" % (d, s), [("c", T("bool", 2, 3)), ("x", T(d, 2, 3))],
                  "%%r = aten::where(%%c, %%x, %s)" % s, "r")
            g.add("aten::where.ScalarSelf", "%s-%s" % (d, s), [("c", T("bool", 2, 3)), ("x", T(d, 2, 3))],
                  "%%r = aten::where(%%c, %s, %%x)" % s, "r")
    for a, b in [("1.5", "2.5"), ("1", "2"), ("1", "2.5"), ("true", "false"), ("true", "3")]:
        g.add("aten::where.Scalar", "%s-%s" % (a, b), [("c", T("bool", 2, 3))],
              "%%r = aten::where(%%c, %s, %s)" % (a, b), "r")

    # maximum / minimum: NaN against everything, ±0
    for op in ["maximum", "minimum"]:
        g.add("aten::%s" % op, "signed-zero", [("x", T("f32", 2)), ("y", T("f32", 2))],
              "%%r = aten::%s(%%x, %%y)" % op, "r",
              inputs={"x": special_array("f32", None, [0.0, -0.0]), "y": special_array("f32", None, [-0.0, 0.0])})


def gen_inplace_out(g):
    for op in ["add", "sub", "mul", "div"]:
        for d in FLOATS + INTS:
            g.add("aten::%s_.Tensor" % op, d, [("x", T(d, 2, 3)), ("y", T(d, 3))],
                  "%%r = aten::%s_(%%x, %%y)" % op, ["r", "x"])
            g.add("aten::%s_.Scalar" % op, d, [("x", T(d, 2, 3))],
                  "%%r = aten::%s_(%%x, 2)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "special-f32", [("x", T("f32", 16, 16)), ("y", T("f32", 1, 16))],
              "aten::%s_(%%x, %%y)" % op, "x",
              inputs={"x": np.repeat(special_array("f32", [16, 1]), 16, 1), "y": special_array("f32", [1, 16])})
        # the result must fit self: dtype and shape
        g.add("aten::%s_.Tensor" % op, "i64-self-f32-other", [("x", T("i64", 3)), ("y", T("f32", 3))],
              "%%r = aten::%s_(%%x, %%y)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "i32-self-i64-other", [("x", T("i32", 3)), ("y", T("i64", 3))],
              "%%r = aten::%s_(%%x, %%y)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "f16-self-f64-other", [("x", T("f16", 3)), ("y", T("f64", 3))],
              "%%r = aten::%s_(%%x, %%y)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "f32-self-0dim-f64", [("x", T("f32", 3)), ("y", T("f64"))],
              "%%r = aten::%s_(%%x, %%y)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "broadcasting-self", [("x", T("f32", 3)), ("y", T("f32", 2, 3))],
              "%%r = aten::%s_(%%x, %%y)" % op, "r")
        g.add("aten::%s_.Scalar" % op, "int-self-float-scalar", [("x", T("i64", 3))],
              "%%r = aten::%s_(%%x, 1.5)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "self-aliases-other", [("x", T("f32", 4))],
              "%%r = aten::%s_(%%x, %%x)" % op, "r")
        g.add("aten::%s_.Tensor" % op, "overlapping-views", [("x", T("f32", 8))],
              ["%a = aten::slice(%x, 0, 0, 6)", "%b = aten::slice(%x, 0, 2, 8)",
               "aten::%s_(%%a, %%b)" % op], "x")
        g.add("aten::%s.out" % op, "f32", [("x", T("f32", 2, 3)), ("y", T("f32", 3)), ("o", T("f32", 2, 3))],
              "%%r = aten::%s(%%x, %%y, out=%%o)" % op, ["r", "o"])
        g.add("aten::%s.out" % op, "explicit-overload", [("x", T("i32", 2, 3)), ("y", T("i32", 3)), ("o", T("i64", 2, 3))],
              "%%r = aten::%s.out(%%x, %%y, out=%%o)" % op, ["r"])
        g.add("aten::%s.out" % op, "out-f64-from-f32", [("x", T("f32", 2, 3)), ("y", T("f32", 2, 3)), ("o", T("f64", 2, 3))],
              "%%r = aten::%s(%%x, %%y, out=%%o)" % op, ["r"])
        g.add("aten::%s.out" % op, "out-i32-from-f32", [("x", T("f32", 2, 3)), ("y", T("f32", 2, 3)), ("o", T("i32", 2, 3))],
              "%%r = aten::%s(%%x, %%y, out=%%o)" % op, ["r"])
        g.add("aten::%s.out" % op, "out-view", [("x", T("f32", 2, 3)), ("y", T("f32", 2, 3)), ("o", T("f32", 3, 2))],
              ["%ot = aten::t(%o)", "aten::%s(%%x, %%y, out=%%ot)" % op], ["o"])
        if op == "add":  # PyTorch resizes a wrong-shaped out (deprecated, with a warning)
            g.add("aten::%s.out" % op, "out-wrong-shape-resized",
                  [("x", T("f32", 2, 3)), ("y", T("f32", 2, 3)), ("o", T("f32", 4))],
                  "%%r = aten::%s(%%x, %%y, out=%%o)" % op, ["r"])
        g.add("aten::%s.out" % op, "out-aliases-input", [("x", T("f32", 2, 3)), ("y", T("f32", 2, 3))],
              "%%r = aten::%s(%%x, %%y, out=%%x)" % op, ["r"])
    for op in ["add", "sub"]:
        g.add("aten::%s.out" % op, "alpha", [("x", T("f32", 2, 3)), ("y", T("f32", 3)), ("o", T("f32", 2, 3))],
              "%%r = aten::%s(%%x, %%y, alpha=2.5, out=%%o)" % op, ["r"])
        g.add("aten::%s_.Tensor" % op, "alpha", [("x", T("bf16", 2, 3)), ("y", T("bf16", 3))],
              "aten::%s_(%%x, %%y, alpha=-3)" % op, ["x"])
    for op in ["maximum", "minimum"]:
        g.add("aten::%s.out" % op, "f32", [("x", T("f32", 2, 3)), ("y", T("f32", 3)), ("o", T("f32", 2, 3))],
              "%%r = aten::%s(%%x, %%y, out=%%o)" % op, ["r", "o"])
        g.add("aten::%s.out" % op, "promote", [("x", T("i32", 2, 3)), ("y", T("f16", 3)), ("o", T("f32", 2, 3))],
              "%%r = aten::%s(%%x, %%y, out=%%o)" % op, ["r"])
    for d in FLOATS + INTS:
        g.add("aten::pow_.Scalar", d, [("x", T(d, 2, 3))], "%r = aten::pow_(%x, 2)", "r")
        g.add("aten::pow_.Tensor", d, [("x", T(d, 2, 3)), ("y", T(d, 3))], "%r = aten::pow_(%x, %y)", "r")
    g.add("aten::pow_.Scalar", "int-self-float-exp", [("x", T("i64", 3))], "%r = aten::pow_(%x, 0.5)", "r")
    g.add("aten::pow_.Tensor", "int-self-float-exp", [("x", T("i64", 3)), ("y", T("f32", 3))],
          "%r = aten::pow_(%x, %y)", "r")
    g.add("aten::div_.Tensor", "int-self", [("x", T("i64", 3)), ("y", T("i64", 3))],
          "%r = aten::div_(%x, %y)", "r")
    g.add("aten::div_.Scalar", "int-self-int-scalar", [("x", T("i32", 3))], "%r = aten::div_(%x, 2)", "r")


UNARY = ["neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "gelu",
         "silu", "erf", "reciprocal", "bitwise_not", "floor", "ceil", "round", "trunc", "sign", "log1p", "expm1",
         "log2"]


def gen_unary(g):
    for op in UNARY:
        for d in ALL:
            g.add("aten::" + op, d, [("x", T(d, 2, 3))], "%%r = aten::%s(%%x)" % op, "r")
        for d in FLOATS + INTS:
            vals = SPECIAL[d]
            if op == "log1p":  # PyTorch's Sleef log1p is inf past ~1.7e38 (docs/ir.md)
                vals = [1e30 if isinstance(v, float) and abs(v) > 1e30 and v != float("inf") else v for v in vals]
            g.add("aten::" + op, "special-" + d, [("x", T(d, 16))], "%%r = aten::%s(%%x)" % op, "r",
                  inputs={"x": special_array(d, None, vals)})
        for d in ["f32", "bf16", "f16", "i64"]:
            g.add("aten::%s_" % op, d, [("x", T(d, 2, 3))], "%%r = aten::%s_(%%x)" % op, ["r", "x"])
            g.add("aten::%s.out" % op, d, [("x", T(d, 2, 3)), ("o", T(d, 2, 3))],
                  "%%r = aten::%s(%%x, out=%%o)" % op, ["r", "o"])
        g.add("aten::%s.out" % op, "out-f64-from-f32", [("x", T("f32", 2, 3)), ("o", T("f64", 2, 3))],
              "%%r = aten::%s(%%x, out=%%o)" % op, ["r"])
        g.add("aten::%s.out" % op, "out-i64-from-i32", [("x", T("i32", 2, 3)), ("o", T("i64", 2, 3))],
              "%%r = aten::%s(%%x, out=%%o)" % op, ["r"])
        g.add("aten::%s_" % op, "through-view", [("x", T("f32", 4, 3))],
              ["%v = aten::select(%x, 1, 1)", "aten::%s_(%%v)" % op], ["x"])
        g.add("aten::" + op, "strided", [("x", T("f32", 3, 4))],
              ["%t = aten::t(%x)", "%%r = aten::%s(%%t)" % op], "r")
        g.add("aten::" + op, "zerodim", [("x", T("f64"))], "%%r = aten::%s(%%x)" % op, "r")
        g.add("aten::" + op, "empty", [("x", T("f32", 0, 3))], "%%r = aten::%s(%%x)" % op, "r")
    for d in FLOATS:
        g.add("aten::gelu", "tanh-" + d, [("x", T(d, 16))], '%r = aten::gelu(%x, approximate="tanh")', "r",
              inputs={"x": special_array(d)})
        g.add("aten::gelu", "tanh-seeded-" + d, [("x", T(d, 4, 8))], '%r = aten::gelu(%x, approximate="tanh")', "r")
    for c in g.cases:
        if c.op.startswith("aten::gelu") and any(t.startswith("bf16") for _, t in c.params):
            c.alt2x = alt_bf16_in_float
    g.add("aten::gelu", "bad-approximate", [("x", T("f32", 4))], '%r = aten::gelu(%x, approximate="erf")', "r")
    g.add("aten::gelu_", "tanh", [("x", T("f32", 4))], 'aten::gelu_(%x, approximate="tanh")', "x")
    g.add("aten::gelu.out", "tanh", [("x", T("f32", 4)), ("o", T("f32", 4))],
          'aten::gelu(%x, approximate="tanh", out=%o)', "o")


def gen_clamp(g):
    for d in FLOATS + INTS:
        g.add("aten::clamp", "both-" + d, [("x", T(d, 2, 3))], "%r = aten::clamp(%x, -2, 3)", "r")
        g.add("aten::clamp", "min-" + d, [("x", T(d, 2, 3))], "%r = aten::clamp(%x, min=-1.5)", "r")
        g.add("aten::clamp", "max-" + d, [("x", T(d, 2, 3))], "%r = aten::clamp(%x, None, 2.5)", "r")
        g.add("aten::clamp_", d, [("x", T(d, 2, 3))], "%r = aten::clamp_(%x, -2, 3)", ["r", "x"])
    for d in FLOATS:
        g.add("aten::clamp", "special-" + d, [("x", T(d, 16))], "%r = aten::clamp(%x, -1.0, 2.0)", "r",
              inputs={"x": special_array(d)})
    g.add("aten::clamp", "min-gt-max", [("x", T("f32", 6))], "%r = aten::clamp(%x, 3, -2)", "r")
    g.add("aten::clamp", "nan-bound", [("x", T("f32", 6))], "%r = aten::clamp(%x, nan, 2.0)", "r")
    g.add("aten::clamp", "none-none", [("x", T("f32", 6))], "%r = aten::clamp(%x, None, None)", "r")
    g.add("aten::clamp", "bool", [("x", T("bool", 6))], "%r = aten::clamp(%x, 0, 1)", "r")
    g.add("aten::clamp", "int-float-bound", [("x", T("i64", 6))], "%r = aten::clamp(%x, -0.5, 2.5)", "r")
    g.add("aten::clamp_", "int-float-bound", [("x", T("i64", 6))], "%r = aten::clamp_(%x, -0.5, 2.5)", "r")
    g.add("aten::clamp_", "through-view", [("x", T("f32", 4, 4))],
          ["%v = aten::slice(%x, 1, 1, 3)", "aten::clamp_(%v, 0.0, 1.0)"], "x")
    CT = "aten::clamp.Tensor"
    for d in FLOATS + INTS:
        g.add(CT, "both-" + d, [("x", T(d, 2, 3)), ("lo", T(d, 3)), ("hi", T(d, 2, 1))],
              "%r = aten::clamp(%x, %lo, %hi)", "r")
    g.add(CT, "min-only", [("x", T("f32", 2, 3)), ("lo", T("f32", 2, 3))], "%r = aten::clamp(%x, %lo)", "r")
    g.add(CT, "max-only", [("x", T("f32", 2, 3)), ("hi", T("f32"))], "%r = aten::clamp(%x, None, %hi)", "r")
    g.add(CT, "promote", [("x", T("i32", 4)), ("lo", T("f32", 4))], "%r = aten::clamp(%x, %lo)", "r")
    g.add(CT, "special", [("x", T("f32", 16, 1)), ("lo", T("f32", 1, 16))], "%r = aten::clamp(%x, %lo)", "r",
          inputs={"x": special_array("f32", [16, 1]), "lo": special_array("f32", [1, 16])})
    g.add(CT, "special-max", [("x", T("f64", 16, 1)), ("hi", T("f64", 1, 16))], "%r = aten::clamp(%x, None, %hi)", "r",
          inputs={"x": special_array("f64", [16, 1]), "hi": special_array("f64", [1, 16])})
    g.add(CT, "broadcast-grows", [("x", T("f32", 3)), ("lo", T("f32", 2, 3))], "%r = aten::clamp(%x, %lo)", "r")
    g.add(CT, "none-none-refused", [("x", T("f32", 3))], "%r = aten::clamp.Tensor(%x, None, None)", "r")
    for op, bound in [("clamp_min", "0.5"), ("clamp_max", "-1")]:
        for d in ALL:
            g.add("aten::" + op, d, [("x", T(d, 2, 3))], "%%r = aten::%s(%%x, %s)" % (op, bound), "r")
        for d in FLOATS:
            g.add("aten::" + op, "special-" + d, [("x", T(d, 16))], "%%r = aten::%s(%%x, 0.0)" % op, "r",
                  inputs={"x": special_array(d)})
        g.add("aten::" + op, "nan-bound", [("x", T("f32", 6))], "%%r = aten::%s(%%x, nan)" % op, "r")
        g.add("aten::" + op, "int-bound", [("x", T("i32", 6))], "%%r = aten::%s(%%x, 2)" % op, "r")
        g.add("aten::" + op, "i32-overflow", [("x", T("i32", 6))], "%%r = aten::%s(%%x, 4294967296)" % op, "r")
        g.add("aten::" + op + "_", "f32", [("x", T("f32", 2, 3))], "%%r = aten::%s_(%%x, 0.25)" % op, ["r", "x"])
        g.add("aten::" + op + "_", "int-float-bound", [("x", T("i64", 6))], "%%r = aten::%s_(%%x, 0.5)" % op, "r")
        g.add("aten::" + op + "_", "through-view", [("x", T("f32", 4, 4))],
              ["%%v = aten::slice(%%x, 1, 1, 3)", "aten::%s_(%%v, 0.0)" % op], "x")


def gen_copy_fill(g):
    for a in ALL:
        for b in ["f32", "bf16", "i64", "bool"]:
            g.add("aten::copy_", "%s-from-%s" % (a, b), [("x", T(a, 2, 3)), ("y", T(b, 2, 3))],
                  "%r = aten::copy_(%x, %y)", ["r", "x"])
    for d in FLOATS:
        for dst in ["i32", "i64", "bool", "f16", "bf16"]:
            g.add("aten::copy_", "special-%s-to-%s" % (d, dst), [("x", T(dst, 16)), ("y", T(d, 16))],
                  "aten::copy_(%x, %y)", "x", inputs={"y": special_array(d)})
    g.add("aten::copy_", "broadcast-src", [("x", T("f32", 2, 3)), ("y", T("f32", 3))], "aten::copy_(%x, %y)", "x")
    g.add("aten::copy_", "broadcast-dst-error", [("x", T("f32", 3)), ("y", T("f32", 2, 3))], "aten::copy_(%x, %y)", "x")
    g.add("aten::copy_", "into-view", [("x", T("f32", 4, 4)), ("y", T("f64", 2, 2))],
          ["%v = aten::slice(%x, 0, 1, 3)", "%w = aten::slice(%v, 1, 2, 4)", "aten::copy_(%w, %y)"], "x")
    g.add("aten::copy_", "transposed-src", [("x", T("f32", 3, 4)), ("y", T("f32", 4, 3))],
          ["%t = aten::t(%y)", "aten::copy_(%x, %t)"], "x")
    g.add("aten::copy_", "overlapping-self", [("x", T("f32", 8))],
          ["%a = aten::slice(%x, 0, 0, 6)", "%b = aten::slice(%x, 0, 2, 8)", "aten::copy_(%a, %b)"], "x")
    g.add("aten::copy_", "into-expanded-error", [("x", T("f32", 3)), ("y", T("f32", 2, 3))],
          ["%e = aten::expand(%x, [2, 3])", "aten::copy_(%e, %y)"], "x")
    g.add("aten::copy_", "non-blocking", [("x", T("f32", 3)), ("y", T("f32", 3))],
          "aten::copy_(%x, %y, true)", "x")
    for d in ALL:
        for v in ["2.5", "-3", "true", "nan", "-0.0"]:
            g.add("aten::fill_.Scalar", "%s-%s" % (d, v), [("x", T(d, 2, 3))], "%%r = aten::fill_(%%x, %s)" % v, ["r", "x"])
    g.add("aten::fill_.Scalar", "i32-overflow", [("x", T("i32", 3))], "aten::fill_(%x, 4294967296)", "x")
    g.add("aten::fill_.Scalar", "f16-overflow", [("x", T("f16", 3))], "aten::fill_(%x, 1e6)", "x")
    g.add("aten::fill_.Scalar", "i64-inf", [("x", T("i64", 3))], "aten::fill_(%x, inf)", "x")
    g.add("aten::fill_.Scalar", "through-view", [("x", T("f32", 4, 4))],
          ["%v = aten::select(%x, 0, 2)", "aten::fill_(%v, 7.0)"], "x")
    g.add("aten::fill_.Scalar", "expanded", [("x", T("f32", 3))],
          ["%e = aten::expand(%x, [2, 3])", "aten::fill_(%e, 1.0)"], "x")
    for d in ALL:
        g.add("aten::zero_", d, [("x", T(d, 2, 3))], "%r = aten::zero_(%x)", ["r", "x"])
        g.add("aten::clone", d, [("x", T(d, 2, 3))], ["%r = aten::clone(%x)", "aten::zero_(%x)"], ["r", "x"])
    g.add("aten::zero_", "through-view", [("x", T("f32", 4, 4))],
          ["%v = aten::transpose(%x, 0, 1)", "%w = aten::select(%v, 0, 1)", "aten::zero_(%w)"], "x")
    g.add("aten::clone", "strided", [("x", T("f32", 3, 4))], ["%t = aten::t(%x)", "%r = aten::clone(%t)"], "r")
    g.add("aten::clone", "special", [("x", T("f32", 16))], "%r = aten::clone(%x)", "r",
          inputs={"x": special_array("f32")})
    g.add("aten::contiguous", "of-transpose", [("x", T("f32", 3, 4))],
          ["%t = aten::t(%x)", "%r = aten::contiguous(%t)", "aten::add_(%r, 1.0)"], ["r", "x"])
    g.add("aten::contiguous", "already-contiguous-aliases", [("x", T("f32", 3, 4))],
          ["%r = aten::contiguous(%x)", "aten::add_(%r, 1.0)"], ["r", "x"])


def gen_views(g):
    V = g.add
    V("aten::view", "basic", [("x", T("f32", 2, 6))], "%r = aten::view(%x, [3, 4])", "r")
    V("aten::view", "infer", [("x", T("bf16", 2, 6))], "%r = aten::view(%x, [-1, 3])", "r")
    V("aten::view", "to-0dim", [("x", T("f32", 1))], "%r = aten::view(%x, [])", "r")
    V("aten::view", "bad-numel", [("x", T("f32", 2, 6))], "%r = aten::view(%x, [5, 2])", "r")
    V("aten::view", "two-infer", [("x", T("f32", 2, 6))], "%r = aten::view(%x, [-1, -1])", "r")
    V("aten::view", "non-viewable-strides", [("x", T("f32", 4, 4))], ["%t = aten::t(%x)", "%r = aten::view(%t, [16])"], "r")
    V("aten::view", "viewable-transpose", [("x", T("f32", 4, 6))],
      ["%t = aten::t(%x)", "%r = aten::view(%t, [2, 3, 4])", "aten::mul_(%r, 2.0)"], ["r", "x"])
    V("aten::view", "write-through", [("x", T("i64", 2, 6))],
      ["%v = aten::view(%x, [12])", "aten::add_(%v, 100)"], "x")
    V("aten::reshape", "contiguous-aliases", [("x", T("f32", 2, 6))],
      ["%r = aten::reshape(%x, [3, 4])", "aten::add_(%r, 1.0)"], ["r", "x"])
    V("aten::reshape", "copy-when-not-viewable", [("x", T("f32", 4, 4))],
      ["%t = aten::t(%x)", "%r = aten::reshape(%t, [16])", "aten::add_(%r, 1.0)"], ["r", "x"])
    V("aten::reshape", "infer", [("x", T("i32", 2, 6))], "%r = aten::reshape(%x, [-1])", "r")
    V("aten::reshape", "bad", [("x", T("f32", 2, 6))], "%r = aten::reshape(%x, [7])", "r")
    for args, n in [("0, 1, 3", "basic"), ("1, -3, -1", "negative"), ("0, 2, 100", "end-clamped"),
                    ("1, None, None, 2", "step"), ("0, -100, 2", "start-clamped"), ("1, 3, 1", "empty"),
                    ("2, 0, 1", "dim-out-of-range"), ("1, 0, 4, 0", "step-zero"), ("1, 0, 4, -1", "step-negative"),
                    ("-1, 1, 4, 2", "negative-dim")]:
        V("aten::slice.Tensor", n, [("x", T("f32", 4, 5))], "%%r = aten::slice(%%x, %s)" % args, "r")
    V("aten::slice.Tensor", "defaults", [("x", T("f32", 4, 5))], "%r = aten::slice(%x)", "r")
    V("aten::slice.Tensor", "keywords", [("x", T("f32", 4, 5))], "%r = aten::slice(%x, dim=1, start=1, step=3)", "r")
    V("aten::slice.Tensor", "write-through", [("x", T("f32", 4, 5))],
      ["%v = aten::slice(%x, 0, 1, 3)", "aten::add_(%v, 1.0)"], "x")
    V("aten::slice.Tensor", "write-through-step", [("x", T("i64", 4, 6))],
      ["%v = aten::slice(%x, 1, 1, 6, 2)", "aten::mul_(%v, -1)"], "x")
    V("aten::slice.Tensor", "rank-expr", [("x", T("f32", 8))], "%r = aten::slice(%x, 0, rank+1, (world+5)*2/3)", "r")
    for args, n in [("0, 1", "basic"), ("1, -1", "negative"), ("0, 4", "out-of-range"),
                    ("1, -6", "negative-out-of-range"), ("2, 0", "bad-dim")]:
        V("aten::select.int", n, [("x", T("f32", 4, 5))], "%%r = aten::select(%%x, %s)" % args, "r")
    V("aten::select.int", "to-0dim-write", [("x", T("f32", 4))],
      ["%v = aten::select(%x, 0, 2)", "aten::fill_(%v, -1.0)"], "x")
    V("aten::select.int", "of-0dim", [("x", T("f32"))], "%r = aten::select(%x, 0, 0)", "r")
    for args, n in [("0, 1, 2", "basic"), ("1, -3, 2", "negative-start"), ("0, 3, 2", "too-long"),
                    ("1, 0, 0", "empty")]:
        V("aten::narrow", n, [("x", T("f32", 4, 5))], "%%r = aten::narrow(%%x, %s)" % args, "r")
    V("aten::narrow", "write-through", [("x", T("f32", 4, 5))],
      ["%v = aten::narrow(%x, 1, 2, 2)", "aten::zero_(%v)"], "x")
    for args, n in [("0, 1", "basic"), ("-1, 0", "negative"), ("1, 1", "same"), ("0, 3", "bad-dim")]:
        V("aten::transpose.int", n, [("x", T("f32", 2, 3, 4))], "%%r = aten::transpose(%%x, %s)" % args, "r")
    V("aten::transpose.int", "write-through", [("x", T("f32", 2, 3))],
      ["%v = aten::transpose(%x, 0, 1)", "%w = aten::select(%v, 0, 2)", "aten::add_(%w, 10.0)"], "x")
    V("aten::t", "2d", [("x", T("bf16", 2, 3))], "%r = aten::t(%x)", "r")
    V("aten::t", "1d", [("x", T("f32", 3))], "%r = aten::t(%x)", "r")
    V("aten::t", "0d", [("x", T("f32"))], "%r = aten::t(%x)", "r")
    V("aten::t", "3d-error", [("x", T("f32", 2, 3, 4))], "%r = aten::t(%x)", "r")
    for args, n in [("[2, 0, 1]", "basic"), ("[-1, 0, 1]", "negative"), ("[0, 0, 1]", "repeated"),
                    ("[0, 1]", "too-short")]:
        V("aten::permute", n, [("x", T("f32", 2, 3, 4))], "%%r = aten::permute(%%x, %s)" % args, "r")
    V("aten::permute", "write-through", [("x", T("f32", 2, 3, 4))],
      ["%v = aten::permute(%x, [2, 0, 1])", "%w = aten::select(%v, 0, 3)", "aten::fill_(%w, 0.5)"], "x")
    for args, n in [("[2, 3]", "basic"), ("[4, -1]", "infer"), ("[2, 2, 3]", "new-dims"), ("[2, 4]", "bad"),
                    ("[-1, 3]", "leading-infer")]:
        V("aten::expand", n, [("x", T("f32", 1, 3))] if n != "bad" else [("x", T("f32", 2, 3))],
          "%%r = aten::expand(%%x, %s)" % args, "r")
    V("aten::expand", "write-error", [("x", T("f32", 1, 3))],
      ["%v = aten::expand(%x, [4, 3])", "aten::add_(%v, 1.0)"], "x")
    V("aten::expand", "implicit", [("x", T("f32", 3))], "%r = aten::expand(%x, [2, 3], implicit=true)", "r")
    for args, n in [("0", "front"), ("2", "back"), ("-1", "negative"), ("3", "bad")]:
        V("aten::unsqueeze", n, [("x", T("f32", 2, 3))], "%%r = aten::unsqueeze(%%x, %s)" % args, "r")
    V("aten::squeeze", "all", [("x", T("f32", 1, 3, 1))], "%r = aten::squeeze(%x)", "r")
    V("aten::squeeze", "none", [("x", T("f32", 2, 3))], "%r = aten::squeeze(%x)", "r")
    V("aten::squeeze.dim", "size1", [("x", T("f32", 1, 3, 1))], "%r = aten::squeeze(%x, 2)", "r")
    V("aten::squeeze.dim", "size-not-1", [("x", T("f32", 1, 3, 1))], "%r = aten::squeeze(%x, 1)", "r")
    V("aten::squeeze.dim", "negative", [("x", T("f32", 1, 3, 1))], "%r = aten::squeeze(%x, -3)", "r")
    V("aten::squeeze.dim", "bad-dim", [("x", T("f32", 1, 3, 1))], "%r = aten::squeeze(%x, 3)", "r")
    V("aten::squeeze.dim", "write-through", [("x", T("f32", 1, 3))],
      ["%v = aten::squeeze(%x, 0)", "aten::neg_(%v)"], "x")
    for args, n in [("", "all"), ("1", "start"), ("0, 1", "range"), ("-2, -1", "negative"), ("2, 1", "bad-order"),
                    ("1, 5", "bad-dim")]:
        V("aten::flatten.using_ints", n, [("x", T("f32", 2, 3, 4))],
          "%%r = aten::flatten(%%x%s)" % ((", " + args) if args else ""), "r")
    V("aten::flatten.using_ints", "0dim", [("x", T("f32"))], "%r = aten::flatten(%x)", "r")
    V("aten::flatten.using_ints", "non-contiguous-copies", [("x", T("f32", 3, 4))],
      ["%t = aten::t(%x)", "%r = aten::flatten(%t)", "aten::add_(%r, 1.0)"], ["r", "x"])
    V("aten::alias", "write-through", [("x", T("f32", 2, 3))],
      ["%a = aten::alias(%x)", "aten::mul_(%a, 3.0)"], ["a", "x"])
    for args, n in [("[2, 2], [1, 2], 1", "basic"), ("[3, 3], [0, 1]", "overlapping"),
                    ("[2, 3], [3, 1], 6", "offset"), ("[4, 4], [4, 1], 4", "out-of-bounds"),
                    ("[2], [-1]", "negative-stride"), ("[], [], 11", "0dim")]:
        V("aten::as_strided", n, [("x", T("f32", 12))], "%%r = aten::as_strided(%%x, %s)" % args, "r")
    V("aten::as_strided", "write-through", [("x", T("f32", 12))],
      ["%v = aten::as_strided(%x, [2, 2], [6, 2], 1)", "aten::fill_(%v, 0.0)"], "x")
    V("aten::as_strided", "of-view-uses-base-storage", [("x", T("f32", 12))],
      ["%v = aten::slice(%x, 0, 4, 12)", "%w = aten::as_strided(%v, [3], [2])"], "w")
    for d in ["f32", "i64", "bf16", "bool"]:
        V("aten::as_strided_scatter", d, [("x", T(d, 12)), ("s", T(d, 2, 2))],
          "%r = aten::as_strided_scatter(%x, %s, [2, 2], [6, 2], 1)", ["r", "x"])
    V("aten::as_strided_scatter", "2d-base", [("x", T("f32", 3, 4)), ("s", T("f32", 3))],
      "%r = aten::as_strided_scatter(%x, %s, [3], [5])", "r")
    V("aten::as_strided_scatter", "src-shape-mismatch", [("x", T("f32", 12)), ("s", T("f32", 3))],
      "%r = aten::as_strided_scatter(%x, %s, [2, 2], [6, 2], 1)", "r")
    V("aten::as_strided_scatter", "src-dtype-mismatch", [("x", T("f32", 12)), ("s", T("f64", 2, 2))],
      "%r = aten::as_strided_scatter(%x, %s, [2, 2], [6, 2], 1)", "r")
    V("aten::as_strided_scatter", "out-of-bounds", [("x", T("f32", 12)), ("s", T("f32", 4, 4))],
      "%r = aten::as_strided_scatter(%x, %s, [4, 4], [4, 1], 4)", "r")
    V("aten::as_strided_scatter", "of-view", [("x", T("f32", 12)), ("s", T("f32", 2))],
      ["%v = aten::slice(%x, 0, 4, 12)", "%r = aten::as_strided_scatter(%v, %s, [2], [3], 1)"], ["r", "x"])
    V("aten::as_strided_scatter", "strided-self", [("x", T("f32", 4, 3)), ("s", T("f32", 2))],
      ["%t = aten::t(%x)", "%r = aten::as_strided_scatter(%t, %s, [2], [1], 0)"], "r")
    for c in g.cases:
        if c.op == "aten::as_strided_scatter":
            c.alt2x = alt_as_strided_scatter
    # chains of views, then a write
    V("aten::select.int", "view-chain-write", [("x", T("f32", 3, 4, 5))],
      ["%a = aten::transpose(%x, 0, 2)", "%b = aten::slice(%a, 1, 1, 3)", "%c = aten::select(%b, 2, 1)",
       "%d = aten::unsqueeze(%c, 0)", "aten::mul_(%d, -2.0)"], "x")
    V("aten::slice.Tensor", "view-sees-later-write", [("x", T("f32", 6))],
      ["%v = aten::slice(%x, 0, 2, 5)", "aten::fill_(%x, 1.5)", "%r = aten::add(%v, 1.0)"], ["r", "v"])
    V("aten::view", "dtype-bool", [("x", T("bool", 2, 3))], "%r = aten::view(%x, [6])", "r")


def gen_reductions(g):
    for d in ALL:
        g.add("aten::sum", d, [("x", T(d, 3, 4))], "%r = aten::sum(%x)", "r")
        g.add("aten::sum.dim_IntList", d, [("x", T(d, 3, 4))], "%r = aten::sum(%x, [1])", "r")
        g.add("aten::amax", d, [("x", T(d, 3, 4))], "%r = aten::amax(%x, [0])", "r")
        g.add("aten::amin", d, [("x", T(d, 3, 4))], "%r = aten::amin(%x, [1], true)", "r")
        g.add("aten::mean", d, [("x", T(d, 3, 4))], "%r = aten::mean(%x)", "r")
        g.add("aten::mean.dim", d, [("x", T(d, 3, 4))], "%r = aten::mean(%x, [0], true)", "r")
    for d in FLOATS:
        for op in ["sum", "amax", "amin", "mean"]:
            key = "aten::%s" % op if op in ("amax", "amin") else "aten::%s.dim%s" % (op, "_IntList" if op == "sum" else "")
            g.add(key, "special-" + d, [("x", T(d, 16, 16))], "%%r = aten::%s(%%x, [0])" % op, "r",
                  inputs={"x": np.repeat(special_array(d, [1, 16]), 16, 0) if op != "sum" else
                          np.concatenate([special_array(d, [16, 1])] * 16, 1)})
        g.add("aten::sum.dim_IntList", "large-" + d, [("x", T(d, 4, 1000))], "%r = aten::sum(%x, [1])", "r")
        g.add("aten::mean.dim", "large-" + d, [("x", T(d, 4, 1000))], "%r = aten::mean(%x, [-1])", "r")
    for c in g.cases:
        if c.op.startswith("aten::mean") and any(t.split("[")[0] in ("bf16", "f16") for _, t in c.params):
            c.alt2x = alt_mean_in_float
    g.add("aten::sum.dim_IntList", "multi-dim", [("x", T("f32", 2, 3, 4))], "%r = aten::sum(%x, [0, 2], true)", "r")
    g.add("aten::sum.dim_IntList", "negative-dims", [("x", T("f64", 2, 3, 4))], "%r = aten::sum(%x, [-1, -3])", "r")
    g.add("aten::sum.dim_IntList", "empty-list-is-all", [("x", T("f32", 2, 3))], "%r = aten::sum(%x, [])", "r")
    g.add("aten::sum.dim_IntList", "none-is-all", [("x", T("f32", 2, 3))], "%r = aten::sum(%x, None)", "r")
    g.add("aten::sum.dim_IntList", "repeated-dim", [("x", T("f32", 2, 3))], "%r = aten::sum(%x, [1, 1])", "r")
    g.add("aten::sum.dim_IntList", "bad-dim", [("x", T("f32", 2, 3))], "%r = aten::sum(%x, [2])", "r")
    g.add("aten::sum.dim_IntList", "int-as-list", [("x", T("f32", 2, 3))], "%r = aten::sum(%x, 1)", "r")
    g.add("aten::sum.dim_IntList", "dtype", [("x", T("f32", 2, 3))], "%r = aten::sum(%x, [1], false, dtype=f64)", "r")
    g.add("aten::sum", "dtype-i32", [("x", T("i32", 2, 3))], "%r = aten::sum(%x, dtype=i32)", "r")
    g.add("aten::sum", "dtype-bf16-to-f32", [("x", T("bf16", 64))], "%r = aten::sum(%x, dtype=f32)", "r")
    g.add("aten::sum", "empty", [("x", T("f32", 0, 3))], "%r = aten::sum(%x)", "r")
    g.add("aten::sum", "0dim", [("x", T("i32"))], "%r = aten::sum(%x)", "r")
    g.add("aten::sum", "strided", [("x", T("f32", 5, 7))], ["%t = aten::t(%x)", "%r = aten::sum(%t, [0])"], "r")
    g.add("aten::sum", "int-overflow", [("x", T("i64", 4))], "%r = aten::sum(%x)", "r",
          inputs={"x": special_array("i64", None, [2 ** 62, 2 ** 62, 2 ** 62, 5])})
    g.add("aten::mean.dim", "dtype", [("x", T("i64", 2, 3))], "%r = aten::mean(%x, [1], dtype=f64)", "r")
    g.add("aten::mean", "dtype-f32-to-f64", [("x", T("f32", 2, 3))], "%r = aten::mean(%x, dtype=f64)", "r")
    g.add("aten::mean.dim", "empty-dim", [("x", T("f32", 0, 3))], "%r = aten::mean(%x, [0])", "r")
    g.add("aten::amax", "all", [("x", T("f32", 3, 4))], "%r = aten::amax(%x)", "r")
    g.add("aten::amax", "empty-error", [("x", T("f32", 0, 3))], "%r = aten::amax(%x, [0])", "r")
    g.add("aten::amin", "signed-zero", [("x", T("f32", 2))], "%r = aten::amin(%x)", "r",
          inputs={"x": special_array("f32", None, [0.0, -0.0])})
    g.add("aten::amax", "signed-zero", [("x", T("f32", 2))], "%r = aten::amax(%x)", "r",
          inputs={"x": special_array("f32", None, [-0.0, 0.0])})
    for op in ["softmax", "log_softmax"]:
        key = "aten::%s.int" % op
        for d in FLOATS:
            g.add(key, d, [("x", T(d, 3, 8))], "%%r = aten::%s(%%x, 1)" % op, "r")
            g.add(key, "special-" + d, [("x", T(d, 16, 16))], "%%r = aten::%s(%%x, 0)" % op, "r",
                  inputs={"x": np.concatenate([special_array(d, [16, 1]), np.repeat(special_array(d, [16, 1])[::-1], 15, 1)], 1)})
        g.add(key, "dim0", [("x", T("f32", 3, 8))], "%%r = aten::%s(%%x, 0)" % op, "r")
        g.add(key, "negative-dim", [("x", T("f64", 2, 3, 4))], "%%r = aten::%s(%%x, -2)" % op, "r")
        g.add(key, "dtype-f64", [("x", T("f32", 3, 8))], "%%r = aten::%s(%%x, 1, f64)" % op, "r")
        g.add(key, "dtype-keyword", [("x", T("bf16", 3, 8))], "%%r = aten::%s(%%x, 1, dtype=f32)" % op, "r")
        g.add(key, "int-input", [("x", T("i64", 3, 8))], "%%r = aten::%s(%%x, 1)" % op, "r")
        g.add(key, "int-input-dtype", [("x", T("i64", 3, 8))], "%%r = aten::%s(%%x, 1, f32)" % op, "r")
        g.add(key, "bad-dim", [("x", T("f32", 3, 8))], "%%r = aten::%s(%%x, 2)" % op, "r")
        g.add(key, "0dim", [("x", T("f32"))], "%%r = aten::%s(%%x, 0)" % op, "r")
        g.add(key, "large-values", [("x", T("f32", 4))], "%%r = aten::%s(%%x, 0)" % op, "r",
              inputs={"x": special_array("f32", None, [1000.0, 999.0, -1000.0, 0.0])})
        g.add(key, "wide-" + "f32", [("x", T("f32", 2, 300))], "%%r = aten::%s(%%x, 1)" % op, "r")


def gen_matmul(g):
    for d in FLOATS + INTS:
        g.add("aten::mm", d, [("a", T(d, 3, 5)), ("b", T(d, 5, 4))], "%r = aten::mm(%a, %b)", "r")
        g.add("aten::bmm", d, [("a", T(d, 2, 3, 5)), ("b", T(d, 2, 5, 4))], "%r = aten::bmm(%a, %b)", "r")
        g.add("aten::matmul", d, [("a", T(d, 2, 3, 5)), ("b", T(d, 5, 4))], "%r = aten::matmul(%a, %b)", "r")
        g.add("aten::addmm", d, [("c", T(d, 4)), ("a", T(d, 3, 5)), ("b", T(d, 5, 4))],
              "%r = aten::addmm(%c, %a, %b)", "r")
        g.add("aten::linear", d, [("x", T(d, 3, 5)), ("w", T(d, 4, 5)), ("b", T(d, 4))],
              "%r = aten::linear(%x, %w, %b)", "r")
    g.add("aten::mm", "bool", [("a", T("bool", 3, 5)), ("b", T("bool", 5, 4))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::mm", "f32-by-f64", [("a", T("f32", 3, 5)), ("b", T("f64", 5, 4))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::mm", "i64-by-f32", [("a", T("i64", 3, 5)), ("b", T("f32", 5, 4))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::mm", "shape-mismatch", [("a", T("f32", 3, 5)), ("b", T("f32", 4, 4))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::mm", "not-2d", [("a", T("f32", 3)), ("b", T("f32", 3, 4))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::mm", "transposed", [("a", T("f32", 5, 3)), ("b", T("f32", 4, 5))],
          ["%at = aten::t(%a)", "%bt = aten::t(%b)", "%r = aten::mm(%at, %bt)"], "r")
    g.add("aten::mm", "special", [("a", T("f32", 16, 1)), ("b", T("f32", 1, 16))], "%r = aten::mm(%a, %b)", "r",
          inputs={"a": special_array("f32", [16, 1]), "b": special_array("f32", [1, 16])})
    g.add("aten::mm", "empty-k", [("a", T("f32", 3, 0)), ("b", T("f32", 0, 4))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::mm", "larger", [("a", T("f32", 33, 65)), ("b", T("f32", 65, 17))], "%r = aten::mm(%a, %b)", "r")
    g.add("aten::bmm", "batch-mismatch", [("a", T("f32", 2, 3, 5)), ("b", T("f32", 3, 5, 4))], "%r = aten::bmm(%a, %b)", "r")
    g.add("aten::bmm", "not-3d", [("a", T("f32", 3, 5)), ("b", T("f32", 5, 4))], "%r = aten::bmm(%a, %b)", "r")
    for sa, sb, n in [((5,), (5,), "dot"), ((5,), (5, 4), "vec-mat"), ((3, 5), (5,), "mat-vec"),
                      ((2, 1, 3, 5), (4, 5, 2), "batch-broadcast"), ((5,), (2, 5, 3), "vec-batch"),
                      ((2, 3, 5), (5,), "batch-vec"), ((3, 5), (4, 5), "mismatch"), ((), (5,), "0dim-error")]:
        g.add("aten::matmul", n, [("a", T("f32", *sa)), ("b", T("f32", *sb))], "%r = aten::matmul(%a, %b)", "r")
    g.add("aten::matmul", "mixed-dtype", [("a", T("f32", 3, 5)), ("b", T("bf16", 5, 4))], "%r = aten::matmul(%a, %b)", "r")
    g.add("aten::addmm", "beta-alpha", [("c", T("f32", 3, 4)), ("a", T("f32", 3, 5)), ("b", T("f32", 5, 4))],
          "%r = aten::addmm(%c, %a, %b, beta=0.5, alpha=2)", "r")
    g.add("aten::addmm", "beta-zero-ignores-nan", [("c", T("f32", 4)), ("a", T("f32", 3, 5)), ("b", T("f32", 5, 4))],
          "%r = aten::addmm(%c, %a, %b, beta=0)", "r",
          inputs={"c": special_array("f32", None, [float("nan"), float("inf"), 1.0, 2.0])})
    g.add("aten::addmm", "bad-bias", [("c", T("f32", 3)), ("a", T("f32", 3, 5)), ("b", T("f32", 5, 4))],
          "%r = aten::addmm(%c, %a, %b)", "r")
    g.add("aten::addmm", "int-float-alpha", [("c", T("i64", 4)), ("a", T("i64", 3, 5)), ("b", T("i64", 5, 4))],
          "%r = aten::addmm(%c, %a, %b, alpha=0.5)", "r")
    g.add("aten::addmm", "bias-dtype-mismatch", [("c", T("f64", 4)), ("a", T("f32", 3, 5)), ("b", T("f32", 5, 4))],
          "%r = aten::addmm(%c, %a, %b)", "r")
    g.add("aten::linear", "no-bias", [("x", T("f32", 3, 5)), ("w", T("f32", 4, 5))], "%r = aten::linear(%x, %w)", "r")
    g.add("aten::linear", "none-bias", [("x", T("f32", 3, 5)), ("w", T("f32", 4, 5))], "%r = aten::linear(%x, %w, None)", "r")
    g.add("aten::linear", "3d", [("x", T("f32", 2, 3, 5)), ("w", T("f32", 4, 5)), ("b", T("f32", 4))],
          "%r = aten::linear(%x, %w, %b)", "r")
    g.add("aten::linear", "1d-input", [("x", T("f32", 5)), ("w", T("f32", 4, 5))], "%r = aten::linear(%x, %w)", "r")
    g.add("aten::linear", "mismatch", [("x", T("f32", 3, 5)), ("w", T("f32", 4, 6))], "%r = aten::linear(%x, %w)", "r")


def gen_cat_stack(g):
    for d in ALL:
        g.add("aten::cat", d, [("a", T(d, 2, 3)), ("b", T(d, 1, 3))], "%r = aten::cat([%a, %b])", "r")
        g.add("aten::stack", d, [("a", T(d, 2, 3)), ("b", T(d, 2, 3))], "%r = aten::stack([%a, %b], 1)", "r")
    g.add("aten::cat", "dim1", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 1))], "%r = aten::cat([%a, %b], 1)", "r")
    g.add("aten::cat", "negative-dim", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 1))], "%r = aten::cat([%a, %b], -1)", "r")
    g.add("aten::cat", "three", [("a", T("i32", 1)), ("b", T("i32", 2)), ("c", T("i32", 3))], "%r = aten::cat([%a, %b, %c])", "r")
    g.add("aten::cat", "one", [("a", T("f32", 2, 2))], ["%r = aten::cat([%a])", "aten::zero_(%a)"], ["r", "a"])
    g.add("aten::cat", "promote", [("a", T("f32", 2)), ("b", T("f64", 2)), ("c", T("i64", 2))], "%r = aten::cat([%a, %b, %c])", "r")
    g.add("aten::cat", "promote-bool-int", [("a", T("bool", 2)), ("b", T("i32", 2))], "%r = aten::cat([%a, %b])", "r")
    g.add("aten::cat", "legacy-empty-1d", [("a", T("f32", 0)), ("b", T("f32", 2, 3))], "%r = aten::cat([%a, %b])", "r")
    g.add("aten::cat", "shape-mismatch", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 4))], "%r = aten::cat([%a, %b])", "r")
    g.add("aten::cat", "rank-mismatch", [("a", T("f32", 2, 3)), ("b", T("f32", 3))], "%r = aten::cat([%a, %b])", "r")
    g.add("aten::cat", "bad-dim", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 3))], "%r = aten::cat([%a, %b], 2)", "r")
    g.add("aten::cat", "0dim-error", [("a", T("f32")), ("b", T("f32"))], "%r = aten::cat([%a, %b])", "r")
    g.add("aten::cat", "empty-list", [], "%r = aten::cat([])", "r")
    g.add("aten::cat", "strided", [("a", T("f32", 3, 2)), ("b", T("f32", 2, 2))],
          ["%at = aten::t(%a)", "%r = aten::cat([%at, %b], 1)"], "r")
    g.add("aten::cat", "special", [("a", T("f32", 16)), ("b", T("f64", 16))], "%r = aten::cat([%a, %b])", "r",
          inputs={"a": special_array("f32"), "b": special_array("f64")})
    g.add("aten::stack", "dim0", [("a", T("f32", 3)), ("b", T("f32", 3))], "%r = aten::stack([%a, %b])", "r")
    g.add("aten::stack", "dim-last", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 3))], "%r = aten::stack([%a, %b], -1)", "r")
    g.add("aten::stack", "dim-end", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 3))], "%r = aten::stack([%a, %b], 2)", "r")
    g.add("aten::stack", "bad-dim", [("a", T("f32", 2, 3)), ("b", T("f32", 2, 3))], "%r = aten::stack([%a, %b], 3)", "r")
    g.add("aten::stack", "shape-mismatch", [("a", T("f32", 2, 3)), ("b", T("f32", 3, 2))], "%r = aten::stack([%a, %b])", "r")
    g.add("aten::stack", "promote", [("a", T("bf16", 2)), ("b", T("f16", 2))], "%r = aten::stack([%a, %b])", "r")
    g.add("aten::stack", "0dim", [("a", T("f32")), ("b", T("f32"))], "%r = aten::stack([%a, %b])", "r")
    g.add("aten::stack", "empty-list", [], "%r = aten::stack([])", "r")


def gen_factories(g):
    for d in ALL:
        g.add("aten::zeros", d, [], "%%r = aten::zeros([2, 3], %s)" % d, "r")
        g.add("aten::ones", d, [], "%%r = aten::ones([3], dtype=%s)" % d, "r")
        g.add("aten::full", d, [], "%%r = aten::full([2, 2], 3, dtype=%s)" % d, "r")
        g.add("aten::empty.memory_format", d, [], "%%r = aten::empty([2, 5], dtype=%s)" % d, "r", tol=SHAPE)
    g.add("aten::zeros", "default-dtype", [], "%r = aten::zeros([4])", "r")
    g.add("aten::zeros", "0dim", [], "%r = aten::zeros([], f64)", "r")
    g.add("aten::zeros", "empty", [], "%r = aten::zeros([0, 3])", "r")
    g.add("aten::zeros", "negative-size", [], "%r = aten::zeros([-1])", "r")
    g.add("aten::zeros", "rank-size", [], "%r = aten::zeros([world, rank+2], i32)", "r")
    g.add("aten::ones", "default-dtype", [], "%r = aten::ones([2, 2])", "r")
    g.add("aten::ones", "int-size", [], "%r = aten::ones(3)", "r")
    for v, n in [("1", "int"), ("1.5", "float"), ("true", "bool"), ("nan", "nan"), ("-inf", "-inf"), ("-0.0", "negzero")]:
        g.add("aten::full", "infer-" + n, [], "%%r = aten::full([2, 3], %s)" % v, "r")
    g.add("aten::full", "int-from-float", [], "%r = aten::full([2], 2.7, dtype=i32)", "r")
    g.add("aten::full", "int-from-nan", [], "%r = aten::full([2], nan, dtype=i64)", "r")
    g.add("aten::full", "bf16-rounding", [], "%r = aten::full([2], 1.00390625, dtype=bf16)", "r")
    g.add("aten::full", "f16-overflow", [], "%r = aten::full([2], 70000.0, dtype=f16)", "r")
    g.add("aten::full", "i32-overflow", [], "%r = aten::full([2], 3000000000, dtype=i32)", "r")
    g.add("aten::full", "bool-from-float", [], "%r = aten::full([2], 0.5, dtype=bool)", "r")
    g.add("aten::full", "positional-dtype", [], "%r = aten::full([2, 2], 1.5, f64)", "r")
    for args, n in [("5", "int"), ("5.0", "float"), ("2.5", "fractional"), ("0", "empty"), ("-3", "negative-end")]:
        g.add("aten::arange", n, [], "%%r = aten::arange(%s)" % args, "r")
    g.add("aten::arange", "dtype", [], "%r = aten::arange(5, dtype=f64)", "r")
    g.add("aten::arange", "positional-dtype", [], "%r = aten::arange(4, bf16)", "r")
    g.add("aten::arange", "dtype-int-from-float", [], "%r = aten::arange(5.5, dtype=i32)", "r")
    for args, n in [("2, 7", "int"), ("-1.5, 2", "float"), ("3, 3", "empty"), ("5, 2", "backwards-error")]:
        g.add("aten::arange.start", n, [], "%%r = aten::arange(%s)" % args, "r")
    g.add("aten::arange.start", "dtype", [], "%r = aten::arange(1, 4, dtype=f16)", "r")
    for args, n in [("0, 10, 3", "int"), ("1, 0, -0.25", "float-negative"), ("0, 1, 0.1", "float-rounding"),
                    ("0, 5, 0", "zero-step"), ("0, 5, -1", "wrong-sign"), ("10, 0, -3", "negative-int"),
                    ("0, 1, 0.3", "float-0.3")]:
        g.add("aten::arange.start_step", n, [], "%%r = aten::arange(%s)" % args, "r")
    g.add("aten::arange.start_step", "dtype-bf16", [], "%r = aten::arange(0, 2, 0.25, dtype=bf16)", "r")
    g.add("aten::arange.start_step", "dtype-i64-float-step", [], "%r = aten::arange(0, 3, 0.5, dtype=i64)", "r")
    g.add("aten::empty.memory_format", "default-dtype", [], "%r = aten::empty([3])", "r", tol=SHAPE)
    g.add("aten::empty.memory_format", "positional-dtype", [], "%r = aten::empty([3, 0], i64)", "r", tol=SHAPE)
    g.add("aten::empty.memory_format", "then-fill", [], ["%r = aten::empty([3], f32)", "aten::fill_(%r, 2.0)"], "r")


def gen_misc(g):
    """Graph-level features every op relies on."""
    g.add("aten::add.Tensor", "scalar-graph-input-bool", [("x", T("f32", 3)), ("b", "bool")],
          "%r = aten::add(%x, %b)", "r")
    g.add("aten::mul.Tensor", "chain-inplace-then-read", [("x", T("f32", 4)), ("y", T("f32", 4))],
          ["%a = aten::mul(%x, %y)", "aten::add_(%x, 1.0)", "%b = aten::mul(%x, %y)", "%c = aten::sub(%b, %a)"],
          ["a", "b", "c", "x"])
    g.add("aten::add_.Tensor", "result-aliases-self", [("x", T("f32", 4)), ("y", T("f32", 4))],
          ["%z = aten::add_(%x, %y)", "aten::mul_(%z, 2.0)"], ["z", "x"])
    g.add("aten::add.Tensor", "same-value-returned-twice", [("x", T("f32", 4))],
          "%r = aten::add(%x, 1.0)", ["r", "r", "x"])
    g.add("aten::add.Tensor", "return-input", [("x", T("f32", 4))], [], ["x"])


conformance_nn.bind(globals())
GENERATORS = [gen_binary, gen_inplace_out, gen_unary, gen_clamp, gen_copy_fill, gen_views,
              gen_reductions, gen_matmul, gen_cat_stack, gen_factories, gen_misc] + conformance_nn.GENERATORS


def generated_cases():
    g = Gen()
    for f in GENERATORS:
        f(g)
    return g.cases


def program_cases(default_worlds=(2,)):
    """Multi-rank programs: tests/torch/programs, tests/diff, examples (.sf files)."""
    out = []
    for folder in [os.path.join(HERE, "programs"), os.path.join(ROOT, "tests", "diff"),
                   os.path.join(ROOT, "examples")]:
        if not os.path.isdir(folder):
            continue
        for dirpath, _, files in sorted(os.walk(folder)):
            for f in sorted(files):
                if not f.endswith(".sf"):
                    continue
                path = os.path.join(dirpath, f)
                with open(path) as fh:
                    text = fh.read()
                if re.search(r"^graph @\w+ ranks ", text, re.M):
                    continue  # ranks that run different code (docs/ir.md): the PyTorch model runs one SPMD graph
                m = re.search(r"^#\s*nproc:\s*([0-9 ,]+)$", text, re.M)
                worlds = [int(x) for x in re.split(r"[ ,]+", m.group(1).strip())] if m else list(default_worlds)
                rel = os.path.relpath(path, ROOT)
                for w in worlds:
                    out.append(Case("program", "program/%s@%d" % (rel, w), text=text, tol=None,
                                    nproc=w, path=path))
    return out


# ---------------------------------------------------------------------------
# comparison

def _dtype_name(arr):
    for name, descr in sf_torch.NPY_DESCR.items():
        if np.dtype(descr) == arr.dtype:
            return name
    return arr.dtype.str


def _float_view(arr, dname):
    if dname == "bf16":
        return (arr.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(arr.shape)
    return arr


def _bits(arr, dname):
    if dname == "bf16":
        return arr.view(np.uint16)
    return arr.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])


def _ordered(arr, dname):
    """Float bit patterns as integers ordered like the floats (±0 both 0)."""
    if dname == "bf16":
        i = arr.view(np.int16).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFF), i)
    w = arr.dtype.itemsize
    i = arr.view({2: np.int16, 4: np.int32, 8: np.int64}[w]).astype(np.int64)
    mask = (1 << (8 * w - 1)) - 1
    return np.where(i < 0, -(i & mask), i)


def fmt_value(arr, dname, idx):
    v = np.asarray(arr[idx] if arr.ndim else arr[()]).reshape(1)
    if dname in ("f32", "f64", "f16", "bf16"):
        f = float(_float_view(v, dname)[0])
        bits = int(_bits(v, dname)[0])
        return "%r (0x%0*x)" % (f, v.dtype.itemsize * 2, bits)
    return repr(v[0].item())


def _ok_mask(a, b, tol, strict_nan=False):
    """Elementwise agreement of a (symmflow) with b (PyTorch) under tol, or a string
    when dtype or shape differ."""
    da, db = _dtype_name(a), _dtype_name(b)
    if da != db:
        return "dtype: symmflow %s, PyTorch %s" % (da, db)
    if a.shape != b.shape:
        return "shape: symmflow %s, PyTorch %s" % (list(a.shape), list(b.shape))
    d = da
    if tol == SHAPE or a.size == 0:
        return np.ones(a.shape, dtype=bool)
    if d not in ("f32", "f64", "f16", "bf16"):
        return np.asarray(a == b)
    fa, fb = _float_view(a, d).astype(np.float64), _float_view(b, d).astype(np.float64)
    nan_a, nan_b = np.isnan(fa), np.isnan(fb)
    same = _bits(a, d) == _bits(b, d)
    if strict_nan:
        return np.asarray(same)
    if tol == EXACT:
        return np.asarray(same | (nan_a & nan_b))
    if tol == PM0:
        return np.asarray(same | (nan_a & nan_b) | ((fa == 0) & (fb == 0)))
    special = nan_a | nan_b | np.isinf(fa) | np.isinf(fb)
    exact_special = (nan_a & nan_b) | (fa == fb)
    if tol == ULP:
        ua, ub, ud = a, b, d
        if d == "f64":  # f64 results computed in f32 (an f32 op with an f64 out=): f32 ulps
            with np.errstate(over="ignore", invalid="ignore"):
                fin = np.isfinite(fa) & np.isfinite(fb)
                if (fa[fin] == fa[fin].astype(np.float32)).all() and (fb[fin] == fb[fin].astype(np.float32)).all():
                    ua, ub, ud = a.astype(np.float32), b.astype(np.float32), "f32"
        dist = np.abs(_ordered(ua, ud) - _ordered(ub, ud))
        return np.asarray(np.where(special, exact_special, dist <= ULP_MAX))
    rtol = RTOL[d]
    finite = np.isfinite(fb)
    scale = np.max(np.abs(fb[finite])) if finite.any() else 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(fa - fb) <= rtol * np.maximum(np.abs(fa), np.abs(fb)) + rtol * scale
    return np.asarray(np.where(special, exact_special, close))


def compare_arrays(a, b, tol, strict_nan=False, alt=None):
    """(None, note) when a (symmflow) matches b (PyTorch) under tol, else (description,
    None). alt: PyTorch's scalar-loop result; an element may match it instead."""
    ok = _ok_mask(a, b, tol, strict_nan)
    if isinstance(ok, str):
        return ok, None
    note = None
    if alt is not None and not ok.all():
        ok_alt = _ok_mask(a, alt, tol)
        if not isinstance(ok_alt, str):
            n_alt = int((~ok & ok_alt).sum())
            if n_alt:
                note = ("%d element(s) match PyTorch's value for the element computed alone "
                        "(one-element tensor), not the vectorised one" % n_alt)
            ok = ok | ok_alt
    if ok.all():
        return None, note
    d = _dtype_name(a)
    idx = tuple(int(i) for i in np.argwhere(~ok)[0]) if ok.ndim else ()
    n_bad = int((~ok).sum())
    why = "first difference at index %s (%d of %d differ): symmflow %s, PyTorch %s" % (
        list(idx), n_bad, ok.size, fmt_value(a, d, idx), fmt_value(b, d, idx))
    if alt is not None:
        why += " (PyTorch on the element alone: %s)" % fmt_value(alt, d, idx)
    return why, None


def compare_dirs(d_sf, d_pt, classes_out, classes_in, default_tol, strict=False, alt=None, notes=None):
    """Compares every file PyTorch wrote with symmflow's. Returns a list of problems.
    alt: {file name: PyTorch's scalar-loop result}; notes: a list to extend."""
    problems = []
    f_pt = sorted(f for f in os.listdir(d_pt) if f.endswith(".npy"))
    f_sf = sorted(f for f in os.listdir(d_sf) if f.endswith(".npy")) if os.path.isdir(d_sf) else []
    for f in sorted(set(f_pt) | set(f_sf)):
        if f not in f_sf:
            problems.append("%s: written by the reference but not by symmflow" % f)
            continue
        if f not in f_pt:
            problems.append("%s: written by symmflow but not by the reference" % f)
            continue
        m = re.match(r"out(\d+)\.rank\d+\.npy$", f)
        if strict:
            tol = EXACT
        elif m and classes_out is not None:
            tol = classes_out[int(m.group(1))]
        elif classes_in is not None:
            tol = classes_in.get(re.sub(r"\.rank\d+\.npy$", "", f), default_tol)
        else:
            tol = default_tol
        if default_tol == SHAPE and m:
            tol = SHAPE
        try:
            a = np.load(os.path.join(d_sf, f), allow_pickle=False)
            b = np.load(os.path.join(d_pt, f), allow_pickle=False)
        except Exception as e:  # noqa: BLE001
            problems.append("%s: cannot read: %s" % (f, e))
            continue
        why, note = compare_arrays(a, b, tol, strict_nan=strict, alt=(alt or {}).get(f))
        if why:
            problems.append("%s [%s]: %s" % (f, tol, why))
        if note and notes is not None:
            notes.append("%s: %s" % (f, note))
    return problems


# ---------------------------------------------------------------------------
# running

SKIP_PATTERNS = [(re.compile(r"not implemented for 'Half'"),
                  "PyTorch 1.13's CPU kernel lacks float16 (PyTorch 2.x has it)"),
                 (re.compile(r"not implemented for 'BFloat16'"),
                  "PyTorch 1.13's CPU kernel lacks bfloat16")]


# refusals that depend on the tensors' values or memory, not on their types: symmflow
# may refuse them when it runs (exit 1) instead of when it parses (exit 2)
RUNTIME_REFUSAL = re.compile(r"ZeroDivisionError|refer to a single memory location|"
                             r"refers to a single memory location|index out of range in self|"
                             r"is out of bounds for dimension|Target -?[0-9]+ is out of bounds")


def err_op(text):
    m = re.search(r"error: ((?:aten|c10d|symm_mem)::[A-Za-z0-9_.]+):", text)
    return m.group(1) if m else None


class Runner:
    def __init__(self, args, workdir):
        self.args, self.workdir = args, workdir
        self.sf = args.symmflow
        self.has_compiled = False
        self.sf_ok = False
        self.env = None

    def snapshot(self):
        """Copies the binary and its libsymmflow.so into the work folder (other people
        rebuild build/dev while this runs); libsymmflow.so is found through
        LD_LIBRARY_PATH, which overrides the binary's RUNPATH."""
        src_dir = os.path.dirname(os.path.abspath(self.sf))
        dst = os.path.join(self.workdir, "bin")
        os.makedirs(dst, exist_ok=True)
        for attempt in range(10):
            try:
                shutil.copy2(self.sf, os.path.join(dst, "symmflow"))
                lib = os.path.join(src_dir, "libsymmflow.so")
                if os.path.exists(lib):
                    shutil.copy2(lib, os.path.join(dst, "libsymmflow.so"))
                env = dict(os.environ, LD_LIBRARY_PATH=dst + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
                p = subprocess.run([os.path.join(dst, "symmflow"), "run", "--help"], env=env,
                                   capture_output=True, text=True, timeout=30)
                if p.returncode == 0:
                    self.sf, self.env = os.path.join(dst, "symmflow"), env
                    return
            except (OSError, subprocess.TimeoutExpired):
                pass
            time.sleep(3)  # a link in progress: try again

    def probe(self):
        if not os.path.exists(self.sf):
            return "symmflow binary %s not found" % self.sf
        if not self.args.no_snapshot:
            self.snapshot()
        try:
            p = subprocess.run([self.sf, "run", "--help"], capture_output=True, text=True, timeout=30,
                               env=self.env)
        except OSError as e:
            return "cannot run %s: %s" % (self.sf, e)
        if p.returncode != 0 or "--save-outputs" not in (p.stdout + p.stderr):
            return "%s has no `run` subcommand with --save-outputs" % self.sf
        self.has_compiled = "compiled" in (p.stdout + p.stderr) and not self.args.no_compiled
        self.sf_ok = True
        return None

    def prepare(self, i, case):
        case.dir = os.path.join(self.workdir, "%04d" % i)
        os.makedirs(case.dir, exist_ok=True)
        case.in_dir = None
        if case.inputs:
            case.in_dir = os.path.join(case.dir, "in")
            os.makedirs(case.in_dir, exist_ok=True)
            for n, arr in case.inputs.items():
                np.save(os.path.join(case.in_dir, n + ".npy"), arr)
        if case.text is None:
            tmpl = case.template()
            probe = tmpl.replace("{RETS}", ", ".join(["f32[]"] * len(case.rets)))
            types, err = sf_torch.infer_return_types(probe, 0, case.in_dir)
            # refused on the values (not the types): a refusal at run time is fine too
            case.value_refusal = types is not None and err is not None and \
                RUNTIME_REFUSAL.search(err) is not None
            case.types_known = types is not None
            if types is None:
                # PyTorch refuses the types: the declared ones are a guess (see run_sf_all)
                types = [dict(case.params).get(r, "f32[]") for r in case.rets]
            case.types = types
            case.text = tmpl.replace("{RETS}", ", ".join(types))
        case.file = os.path.join(case.dir, "case.sf")
        with open(case.file, "w") as f:
            f.write(case.text)

    def run_torch(self, case):
        out = os.path.join(case.dir, "pt")
        t0 = time.time()
        rc, err = sf_torch.run_program(case.text, case.nproc, 0, case.in_dir, out, filename=case.file)
        case.pt = (rc, err, out)
        case.pt_time = time.time() - t0

    def run_sf(self, case, mode):
        out = os.path.join(case.dir, "sf_" + mode)
        cmd = [self.sf, "run", case.file, "--nproc", str(case.nproc)]
        cmd += ["--check"] if mode == "check" else ["--mode", mode]
        cmd += ["--save-outputs", out]
        if case.in_dir:
            cmd += ["--inputs", case.in_dir]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.args.timeout, env=self.env)
            return p.returncode, (p.stderr + p.stdout).strip(), out, cmd
        except subprocess.TimeoutExpired:
            return 124, "timed out after %d s" % self.args.timeout, out, cmd
        except OSError as e:  # e.g. the binary is being relinked
            return 126, "cannot run %s: %s" % (self.sf, e), out, cmd

    def run_sf_all(self, case):
        """symmflow's runs of a case; when PyTorch refuses a case whose return types the
        driver had to guess and symmflow refuses only those types, the types symmflow
        names are declared and symmflow runs again (so its real answer shows)."""
        self.run_sf_modes(case)
        case.retyped = False
        if case.pt[0] != 2 or getattr(case, "types_known", True):
            return
        for _ in range(len(case.rets)):
            rc, err = case.sf["eager"][0], case.sf["eager"][1]
            m = re.search(r"return value (\d+) \(%[^)]*\) is (.+?) but the signature says", err)
            if rc != 2 or not m:
                break
            case.types[int(m.group(1))] = m.group(2)
            case.text = case.template().replace("{RETS}", ", ".join(case.types))
            with open(case.file, "w") as f:
                f.write(case.text)
            case.retyped = True
            self.run_sf_modes(case)

    def run_sf_modes(self, case):
        """By default one `--check` run: symmflow compares compiled with eager bitwise
        itself and saves the compiled outputs; only when that check fails is eager run
        again on its own (to compare eager with PyTorch too). --separate: two runs."""
        case.sf = {}
        case.sf_label = "symmflow eager"
        # uninitialised outputs (aten::empty) differ between runs: two runs, shapes only
        if self.has_compiled and not self.args.separate and case.tol != SHAPE:
            r = self.run_sf(case, "check")
            if r[0] == 1 and "check: MISMATCH" in r[1]:
                case.sf["check"] = r
                case.sf["eager"] = self.run_sf(case, "eager")
            else:
                case.sf["eager"] = r  # == compiled, bitwise, when 0
                case.sf_label = "symmflow --check"
            return
        case.sf["eager"] = self.run_sf(case, "eager")
        if self.has_compiled:
            case.sf["compiled"] = self.run_sf(case, "compiled")

    def half_via_float(self, case):
        """What can still be said of an f16 case PyTorch 1.13 cannot run: symmflow against
        the same program in f32, rounded to f16 (how PyTorch 2.x computes most f16 ops)."""
        rc_s, err_s, d_sf, _ = case.sf["eager"]
        if rc_s != 0:
            return "symmflow exits %d: %s" % (rc_s, err_s.strip().splitlines()[-1] if err_s else "")
        text = re.sub(r"\bf16\b", "f32", case.text)
        in_dir = None
        if case.in_dir:
            in_dir = os.path.join(case.dir, "in_f32")
            os.makedirs(in_dir, exist_ok=True)
            for n, arr in case.inputs.items():
                np.save(os.path.join(in_dir, n + ".npy"), arr.astype(np.float32) if arr.dtype == np.float16 else arr)
        out = os.path.join(case.dir, "pt_f32")
        rc, err = sf_torch.run_program(text, 1, 0, in_dir, out)
        if rc != 0:
            return "PyTorch refuses the f32 program too: " + err
        bad = []
        for f in sorted(os.listdir(out)):
            ref = np.load(os.path.join(out, f))
            if ref.dtype == np.float32:
                ref = ref.astype(np.float16)
            why, _ = compare_arrays(np.load(os.path.join(d_sf, f)), ref, ULP if case.tol == EXACT else case.tol)
            if why:
                bad.append("%s: %s" % (f, why))
        if bad:
            return "symmflow differs from PyTorch's f32 result rounded to f16: " + "; ".join(bad)
        return "symmflow matches PyTorch's f32 result rounded to f16"

    def judge(self, case):
        rc_t, err_t, d_pt = case.pt
        for pat, why in SKIP_PATTERNS:
            if rc_t != 0 and pat.search(err_t):
                case.result, case.detail = "skip", "%s: %s" % (why, err_t.strip().splitlines()[0])
                if "Half" in err_t and case.path is None:
                    case.detail += "; " + self.half_via_float(case)
                return
        if rc_t == 2 and "functional form is not supported" in err_t:
            case.result, case.detail = "skip", "uses the functional form (the reference runs user programs only)"
            return
        if case.op in NOT_COMPARABLE:
            case.result, case.detail = "skip", NOT_COMPARABLE[case.op]
            return
        problems = []
        rc_s, err_s, d_sf, cmd = case.sf["eager"]
        if rc_t not in (0, 2):
            problems.append("the reference failed (exit %d): %s" % (rc_t, err_t))
        elif rc_t == 2:
            value_refusal = getattr(case, "value_refusal", False)
            if case.retyped:
                problems.append("symmflow accepts the op at parse time (PyTorch refuses it; the "
                                "return types declared are the ones symmflow infers)")
            if value_refusal and rc_s == 1:
                op = err_op(err_t)
                base = op.split(".")[0] if op else None
                # a run-time message may name the op without its namespace
                if base and base.split("::")[1].rstrip("_") not in err_s:
                    problems.append("both refuse at run time, but symmflow's message does not name %s:\n"
                                    "      symmflow: %s\n      PyTorch:  %s" % (base, err_s, err_t.strip()))
            elif rc_s != 2:
                problems.append("PyTorch refuses (%s) but %s exits %d%s" % (
                    err_t.strip(), case.sf_label, rc_s, (": " + err_s.splitlines()[-1]) if err_s else ""))
            else:
                op = err_op(err_t)
                base = op.split(".")[0] if op else None
                if base and base.rstrip("_") not in err_s:
                    problems.append("both refuse, but symmflow's message does not name %s:\n"
                                    "      symmflow: %s\n      PyTorch:  %s" % (base, err_s, err_t.strip()))
        else:
            if rc_s != 0:
                problems.append("PyTorch accepts but %s exits %d: %s" % (case.sf_label, rc_s, err_s))
            else:
                if case.nproc == 1 and case.path is None:
                    g = sf_torch.parse(case.text)
                    cls = [case.tol] * len(g.ret_values)
                    found = compare_dirs(d_sf, d_pt, cls, None, case.tol)
                    if found:
                        # PyTorch's result for an element may depend on its vectorisation:
                        # every file holding the op's result may match the one-element one
                        alt = sf_torch.elementwise_reference(case.text, 0, case.in_dir)
                        if alt is not None:
                            ref = np.load(os.path.join(d_pt, "out0.rank0.npy"))
                            alts = {}
                            for f in os.listdir(d_pt):
                                other = np.load(os.path.join(d_pt, f))
                                if other.dtype == ref.dtype and other.shape == ref.shape and \
                                        other.tobytes() == ref.tobytes():
                                    alts[f] = alt
                            found = compare_dirs(d_sf, d_pt, cls, None, case.tol, alt=alts,
                                                 notes=case.notes)
                    alt2x = case.alt2x(case) if found and case.alt2x is not None else None
                    if alt2x is not None:
                        why, _ = compare_arrays(np.load(os.path.join(d_sf, "out0.rank0.npy")),
                                                alt2x, case.tol)
                        if why is None:
                            case.result = "skip"
                            case.detail = ("PyTorch 1.13 differs from PyTorch 2.x here; symmflow matches "
                                           "2.x: " + case.alt2x.__doc__.strip())
                            return
                    problems += found
                else:
                    g = sf_torch.parse(case.text)
                    outs, ins = output_classes(g)
                    problems += compare_dirs(d_sf, d_pt, outs, ins, EXACT)
        if "check" in case.sf:
            problems.append("symmflow --check: compiled differs from eager: " + case.sf["check"][1])
        if "compiled" in case.sf:
            rc_c, err_c, d_c, _ = case.sf["compiled"]
            if rc_c != rc_s:
                problems.append("--mode compiled exits %d but --mode eager %d%s" % (
                    rc_c, rc_s, (": " + err_c.splitlines()[-1]) if err_c else ""))
            elif rc_c == 0:
                for p in compare_dirs(d_c, d_sf, None, None, case.tol if case.tol == SHAPE else EXACT,
                                      strict=case.tol != SHAPE):
                    problems.append("compiled vs eager: " + p.replace("symmflow", "compiled").replace(
                        "PyTorch", "eager").replace("the reference", "eager"))
        case.result = "fail" if problems else "pass"
        case.detail = "\n".join(problems + (case.notes if problems else []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--symmflow", default=os.path.join(ROOT, "build", "dev", "symmflow"))
    ap.add_argument("-j", type=int, default=2, help="symmflow runs in parallel (default 2)")
    ap.add_argument("-k", default=None, help="only cases whose name contains SUBSTR")
    ap.add_argument("--list", action="store_true", help="print the case counts per op and exit")
    ap.add_argument("--show", action="store_true", help="with --list: print every case's program")
    ap.add_argument("--keep", default=None, help="keep the case folders in this directory")
    ap.add_argument("--no-compiled", action="store_true", help="do not run --mode compiled")
    ap.add_argument("--separate", action="store_true",
                    help="run --mode eager and --mode compiled separately (default: one --check run)")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="run the binary in place (default: a copy, safe from rebuilds during the run)")
    ap.add_argument("--torch-only", action="store_true", help="run only the reference (no symmflow)")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per symmflow run")
    ap.add_argument("--worlds", default="2",
                    help="world sizes for programs without a '# nproc:' line (default 2; e.g. 2,3)")
    ap.add_argument("-v", action="store_true", help="also print passing and skipped cases")
    args = ap.parse_args()

    worlds = [int(w) for w in args.worlds.split(",") if w]
    cases = generated_cases() + program_cases(worlds)
    if args.k:
        cases = [c for c in cases if args.k in c.name]
    per_op = {}
    for c in cases:
        per_op.setdefault(c.op, []).append(c)

    registered = None
    if os.path.exists(args.symmflow):
        try:
            p = subprocess.run([args.symmflow, "ops", "aten"], capture_output=True, text=True, timeout=30)
            registered = sorted(set(re.findall(r"^(aten::[A-Za-z0-9_.]+)\(", p.stdout, re.M)))
        except OSError:
            pass

    if args.list:
        for op in sorted(per_op):
            print("%-34s %4d" % (op, len(per_op[op])))
            if args.show:
                for c in per_op[op]:
                    print("  " + c.name)
        print("total: %d cases" % len(cases))
        if registered and not args.k:
            missing = [o for o in registered if o not in per_op and o not in NOT_COMPARABLE]
            print("registered aten overloads without a case: %s" % (", ".join(missing) or "none"))
        return 0

    workdir = args.keep or tempfile.mkdtemp(prefix="sf_conformance_")
    os.makedirs(workdir, exist_ok=True)
    runner = Runner(args, workdir)
    why = None if args.torch_only else runner.probe()
    if why:
        print("conformance: cannot run symmflow: %s" % why, file=sys.stderr)
        print("conformance: 0 passed, 0 failed, %d skipped" % len(cases))
        return 1
    t0 = time.time()
    # 1. the reference, in this process (before any thread: multi-rank runs fork);
    #    PyTorch's C++ warnings go to reference.log, not to this report
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(os.path.join(workdir, "reference.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 2)
    try:
        for i, c in enumerate(cases):
            runner.prepare(i, c)
            runner.run_torch(c)
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)
    t_torch = time.time() - t0
    if args.torch_only:
        bad = [c for c in cases if c.pt[0] not in (0, 2)]
        for c in cases:
            if args.v or c.pt[0] not in (0, 2):
                print("%s: exit %d %s" % (c.name, c.pt[0], c.pt[1]))
        print("reference: %d cases, %d refused, %d broken, %.1f s" % (
            len(cases), sum(c.pt[0] == 2 for c in cases), len(bad), t_torch))
        return 1 if bad else 0
    # 2. symmflow, in parallel
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as ex:
        list(ex.map(runner.run_sf_all, cases))
    # 3. compare
    for c in cases:
        runner.judge(c)
    elapsed = time.time() - t0

    # Known disagreements (known_disagreements.txt) are listed, not counted as
    # failures; a listed case that passes is one (the list must not rot).
    known = set()
    with open(os.path.join(HERE, "known_disagreements.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                known.add(line)
    known_failing = [c for c in cases if c.name in known and c.result == "fail"]
    for c in known_failing:
        c.result = "known"
    for c in cases:
        if c.name in known and c.result == "pass" and not args.k:
            c.result = "fail"
            c.detail = "listed in known_disagreements.txt but passes now: remove it from the list"
    n_pass = sum(c.result == "pass" for c in cases)
    n_fail = sum(c.result == "fail" for c in cases)
    n_skip = sum(c.result == "skip" for c in cases)
    for c in cases:
        if c.result == "fail":
            print("FAIL %s: %s" % (c.name, c.detail.splitlines()[0] if c.detail else ""))
            for line in c.text.rstrip("\n").splitlines():
                print("    | " + line)
            if c.in_dir:
                print("    inputs: %s" % ", ".join("%s=%s" % (k, np.array2string(
                    _float_view(v, _dtype_name(v)) if _dtype_name(v) == "bf16" else v,
                    separator=",", max_line_width=10 ** 6, threshold=64)) for k, v in c.inputs.items()))
            for line in c.detail.splitlines()[1:]:
                print("    " + line)
        elif args.v:
            print("%s %s%s" % (c.result.upper(), c.name, (": " + c.detail) if c.detail else ""))
    if known_failing:
        print("\nknown disagreements (%d, tests/torch/known_disagreements.txt): %s" % (
            len(known_failing), ", ".join(c.name for c in known_failing)))
    skipped = [c for c in cases if c.result == "skip"]
    if skipped:
        print("\nskipped:")
        reasons = {}
        for c in skipped:
            reasons.setdefault(c.detail.split(":")[0], []).append(c)
        for r, cs in reasons.items():
            print("  %s (%d): %s" % (r, len(cs), ", ".join(c.name for c in cs)))
        odd = [c for c in skipped if "symmflow differs from PyTorch's f32" in c.detail
               or "symmflow exits" in c.detail]
        if odd:
            print("  of these, symmflow's f16 result is not PyTorch's f32 result rounded to f16 in:")
            for c in odd:
                print("    %s: %s" % (c.name, c.detail.split("; ", 1)[-1]))
    print("\n%-34s %6s %6s %6s %6s" % ("op", "cases", "passed", "failed", "skipped"))
    for op in sorted(per_op):
        cs = per_op[op]
        print("%-34s %6d %6d %6d %6d" % (op, len(cs), sum(c.result == "pass" for c in cs),
                                         sum(c.result == "fail" for c in cs), sum(c.result == "skip" for c in cs)))
    if registered and not args.k:
        missing = [o for o in registered if o not in per_op and o not in NOT_COMPARABLE]
        if missing:
            print("registered aten overloads without a case: %s" % ", ".join(missing))
        nc = [o for o in registered if o in NOT_COMPARABLE]
        if nc:
            print("not comparable with PyTorch: %s" % ", ".join(nc))
    if not runner.has_compiled:
        print("note: --mode compiled was not run (%s)" % (
            "--no-compiled" if args.no_compiled else "the symmflow binary does not offer it"))
    print("time: %.1f s (reference %.1f s), cases in %s" % (elapsed, t_torch, workdir))
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    print("conformance: %d passed, %d failed, %d skipped" % (n_pass, n_fail, n_skip))
    return 0 if n_fail == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
