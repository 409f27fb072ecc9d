#!/usr/bin/python3
"""Reference runner: executes a symmflow `.sf` program in real PyTorch.

    /usr/bin/python3 tests/torch/sf_torch.py FILE.sf --nproc N [--seed S] \
        [--inputs DIR] --save-outputs DIR

It writes the same .npy files as `symmflow run --save-outputs DIR` (docs/ir.md):
`DIR/out<i>.rank<R>.npy` per returned value and `DIR/<name>.rank<R>.npy` per
tensor graph input (its final contents). Errors that PyTorch raises are printed
as `error: <op>: <message>` on stderr, exit status 2.

Semantics are eager PyTorch's: `aten::` ops call `torch.ops.aten.<name>[.<overload>]`
(the OpOverloadPacket resolves an omitted overload), in-place ops write their
input, views share storage. `c10d::` and `symm_mem::` ops run on torch.distributed
with the gloo backend, one process per rank, over loopback only; a self-send
(peer == own rank) is a local copy matched in program order per (peer, tag).

Importable API (the conformance driver runs many programs in one process):

    import sf_torch
    rc, err = sf_torch.run_program(text, nproc=1, seed=0, inputs_dir=None, out_dir="D")

Programs with no c10d/symm_mem op and nproc == 1 run in the calling process;
the others fork one process per rank (so the caller must not have initialised
torch.distributed itself).
"""
import argparse
import datetime
import math
import os
import re
import sys
import tempfile
import traceback

try:
    import numpy as np
    import torch
except ImportError:  # the PATH's python may not be Debian's (python3-torch): re-run under it
    if __name__ == "__main__" and os.path.exists("/usr/bin/python3") and \
            os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

# ---------------------------------------------------------------------------
# errors


class SfError(Exception):
    """A parse/verify error: `file:line:col: message`, exit 2."""

    def __init__(self, msg, line=0, col=0):
        super().__init__(msg)
        self.msg, self.line, self.col = msg, line, col


class OpError(Exception):
    """An op refused its arguments (or PyTorch raised): `error: <op>: <message>`."""

    def __init__(self, op, msg, rc=2):
        super().__init__(msg)
        self.op, self.msg, self.rc = op, msg, rc


# ---------------------------------------------------------------------------
# dtypes and the input fill formula

DTYPES = {
    "f32": torch.float32, "f64": torch.float64, "bf16": torch.bfloat16, "f16": torch.float16,
    "i32": torch.int32, "i64": torch.int64, "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
FLOAT_DTYPES = ("f32", "f64", "bf16", "f16")
INT_DTYPES = ("i32", "i64")
# .npy descr per dtype (bf16 travels as its raw bits in "<u2")
NPY_DESCR = {"f32": "<f4", "f64": "<f8", "bf16": "<u2", "f16": "<f2", "i32": "<i4",
             "i64": "<i8", "bool": "|b1"}

_M64 = (1 << 64) - 1


def fill_hash(seed, k, r, n):
    """h (as numpy uint64) for elements 0..n-1 of input k on rank r (docs/ir.md)."""
    base = (seed * 0x9E3779B97F4A7C15 + (k + 1) * 0xBF58476D1CE4E5B9
            + r * 0x94D049BB133111EB) & _M64
    with np.errstate(over="ignore"):
        x = np.arange(n, dtype=np.uint64) + np.uint64(base)
        z = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return (z ^ (z >> np.uint64(31))) >> np.uint64(32)


def fill_hash_scalar(seed, k, r, i):
    """The same formula on Python ints, for tests of fill_hash."""
    x = (seed * 0x9E3779B97F4A7C15 + (k + 1) * 0xBF58476D1CE4E5B9 + r * 0x94D049BB133111EB + i) & _M64
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return (z ^ (z >> 31)) >> 32


def fill_values(dtype_name, h):
    """numpy values (float64 / int64 / bool) from hashes h."""
    if dtype_name in FLOAT_DTYPES:
        return ((h % np.uint64(256)).astype(np.int64) - 128).astype(np.float64) / 16.0
    if dtype_name in INT_DTYPES:
        return (h % np.uint64(201)).astype(np.int64) - 100
    return (h % np.uint64(2)).astype(bool)


def fill_tensor(dtype_name, shape, seed, k, r):
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    vals = fill_values(dtype_name, fill_hash(seed, k, r, n)).reshape(shape)
    # (np.ascontiguousarray would make a 0-d array 1-d)
    return torch.from_numpy(np.array(vals, order="C")).to(DTYPES[dtype_name]).contiguous()


def fill_scalar(kind, seed, k, r):
    h = fill_hash(seed, k, r, 1)
    if kind == "i64":
        return int(fill_values("i64", h)[0])
    if kind == "f64":
        return float(fill_values("f64", h)[0])
    return bool(fill_values("bool", h)[0])


# ---------------------------------------------------------------------------
# .npy in and out


def tensor_to_numpy(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def numpy_to_tensor(a, dtype_name):
    a = np.array(a, order="C")
    if dtype_name == "bf16":
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def save_npy(path, value):
    if isinstance(value, torch.Tensor):
        arr = tensor_to_numpy(value)
    elif isinstance(value, bool):
        arr = np.array(value, dtype=bool)
    elif isinstance(value, int):
        arr = np.array(value, dtype=np.int64)
    else:
        arr = np.array(value, dtype=np.float64)
    tmp = path + ".tmp.npy"
    np.save(tmp, arr)
    os.replace(tmp, path)


def load_npy(path):
    """numpy array and its dtype name under the .sf convention ('<u2' = bf16)."""
    a = np.load(path, allow_pickle=False)
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("<"))
    for name, descr in NPY_DESCR.items():
        if np.dtype(descr) == a.dtype:
            return a, name
    return a, a.dtype.str


# ---------------------------------------------------------------------------
# lexer

_TOKEN_RE = re.compile(r"""
  (?P<ws>[ \t\r]+)
| (?P<comment>\#[^\n]*)
| (?P<nl>\n)
| (?P<string>"(?:[^"\\\n]|\\.)*")
| (?P<float>(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+))
| (?P<int>\d+)
| (?P<gname>@[A-Za-z0-9_.]+)
| (?P<ident>[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)?)
| (?P<arrow>->)
| (?P<punct>[()\[\]{},=:+\-*/])
""", re.X)
_VALUE_RE = re.compile(r"[A-Za-z0-9_.]+")


class Tok:
    __slots__ = ("kind", "text", "line", "col")

    def __init__(self, kind, text, line, col):
        self.kind, self.text, self.line, self.col = kind, text, line, col

    def __repr__(self):
        return "Tok(%s,%r)" % (self.kind, self.text)


def lex(text):
    toks, i, line, lstart = [], 0, 1, 0
    n = len(text)
    while i < n:
        col = i - lstart + 1
        c = text[i]
        if c == "%":
            prev = toks[-1] if toks else None
            after_operand = prev is not None and (
                prev.kind in ("int",) or (prev.kind == "punct" and prev.text == ")")
                or (prev.kind == "ident" and prev.text in ("rank", "world")))
            if after_operand:
                toks.append(Tok("punct", "%", line, col))
                i += 1
                continue
            m = _VALUE_RE.match(text, i + 1)
            if not m:
                raise SfError("expected a value name after '%'", line, col)
            toks.append(Tok("value", text[i:m.end()], line, col))
            i = m.end()
            continue
        m = _TOKEN_RE.match(text, i)
        if not m:
            raise SfError("unexpected character %r" % c, line, col)
        kind = m.lastgroup
        if kind == "nl":
            toks.append(Tok("nl", "\n", line, col))
            line += 1
            lstart = m.end()
        elif kind not in ("ws", "comment"):
            toks.append(Tok(kind, m.group(), line, col))
        i = m.end()
    toks.append(Tok("nl", "\n", line, i - lstart + 1))
    toks.append(Tok("eof", "", line, i - lstart + 1))
    return toks


# ---------------------------------------------------------------------------
# AST

class Type:
    def __init__(self, dtype, shape=None, scalar=False):
        self.dtype, self.shape, self.scalar = dtype, shape, scalar

    def __str__(self):
        if self.scalar:
            return self.dtype
        return "%s[%s]" % (self.dtype, ", ".join(str(s) for s in self.shape))


class Stmt:
    def __init__(self, results, functional, op, args, line, col):
        self.results, self.functional, self.op, self.args = results, functional, op, args
        self.line, self.col = line, col


class Graph:
    def __init__(self, name, params, rets, stmts, ret_values, ret_line):
        self.name, self.params, self.rets, self.stmts = name, params, rets, stmts
        self.ret_values, self.ret_line = ret_values, ret_line

    def uses_dist(self):
        return any(s.op.split("::")[0] in ("c10d", "symm_mem") for s in self.stmts)


# expression nodes: ("value", name, line, col) ("list", [e]) ("int", iexpr) ("float", v)
# ("str", s) ("bool", b) ("none",) ("dtype", name)
# int expressions: ("lit", n) ("rank",) ("world",) ("neg", e) ("bin", op, a, b, line, col)


class Parser:
    def __init__(self, text):
        self.toks = lex(text)
        self.i = 0

    # -- helpers
    def peek(self, k=0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def describe(self, t):
        if t.kind == "nl":
            return "end of line"
        if t.kind == "eof":
            return "end of file"
        return "'%s'" % t.text

    def expect(self, kind, text=None):
        t = self.peek()
        if t.kind != kind or (text is not None and t.text != text):
            want = text if text is not None else kind
            raise SfError("expected '%s', found %s" % (want, self.describe(t)), t.line, t.col)
        return self.next()

    def accept(self, kind, text=None):
        t = self.peek()
        if t.kind == kind and (text is None or t.text == text):
            return self.next()
        return None

    def skip_nl(self):
        while self.peek().kind == "nl":
            self.next()

    # -- grammar
    def parse(self):
        self.skip_nl()
        self.expect("ident", "graph")
        name = self.expect("gname").text
        self.expect("punct", "(")
        params, seen = [], {}
        self.skip_nl()
        if not self.accept("punct", ")"):
            while True:
                self.skip_nl()
                v = self.expect("value")
                if v.text in seen:
                    raise SfError("value %s is already defined (at line %d)" % (v.text, seen[v.text]),
                                  v.line, v.col)
                seen[v.text] = v.line
                self.expect("punct", ":")
                params.append((v.text, self.parse_type()))
                self.skip_nl()
                if self.accept("punct", ")"):
                    break
                self.expect("punct", ",")
        self.expect("arrow")
        self.expect("punct", "(")
        rets = []
        if not self.accept("punct", ")"):
            while True:
                rets.append(self.parse_type())
                if self.accept("punct", ")"):
                    break
                self.expect("punct", ",")
        self.skip_nl()
        self.expect("punct", "{")
        stmts, ret_values, ret_line = [], None, 0
        while True:
            self.skip_nl()
            t = self.peek()
            if t.kind == "punct" and t.text == "}":
                self.next()
                break
            if t.kind == "eof":
                raise SfError("expected '}', found end of file", t.line, t.col)
            if ret_values is not None:
                raise SfError("the return statement must be the last one", t.line, t.col)
            if t.kind == "ident" and t.text == "return":
                self.next()
                ret_line = t.line
                ret_values = []
                if self.peek().kind == "value":
                    while True:
                        ret_values.append(self.expect("value"))
                        if not self.accept("punct", ","):
                            break
                self.end_of_line()
                continue
            stmts.append(self.parse_stmt())
        self.skip_nl()
        t = self.peek()
        if t.kind != "eof":
            raise SfError("expected end of file, found %s" % self.describe(t), t.line, t.col)
        if ret_values is None:
            raise SfError("graph @%s has no return statement" % name[1:], t.line, t.col)
        return Graph(name[1:], params, rets, stmts, ret_values, ret_line)

    def end_of_line(self):
        t = self.peek()
        if t.kind not in ("nl", "eof") and not (t.kind == "punct" and t.text == "}"):
            raise SfError("expected end of line, found %s" % self.describe(t), t.line, t.col)

    def parse_type(self):
        t = self.expect("ident")
        if t.text not in DTYPES:
            raise SfError("expected a type, found '%s'" % t.text, t.line, t.col)
        if not self.accept("punct", "["):
            if t.text in ("i64", "f64", "bool"):
                return Type(t.text, scalar=True)
            raise SfError("a scalar input is i64, f64 or bool, found '%s'" % t.text, t.line, t.col)
        shape = []
        if not self.accept("punct", "]"):
            while True:
                neg = self.accept("punct", "-")
                n = self.expect("int")
                if neg:
                    raise SfError("a size must be >= 0", n.line, n.col)
                shape.append(int(n.text))
                if self.accept("punct", "]"):
                    break
                self.expect("punct", ",")
        return Type(t.text, shape)

    def parse_stmt(self):
        first = self.peek()
        results = []
        if first.kind == "value":
            while True:
                results.append(self.expect("value"))
                if not self.accept("punct", ","):
                    break
            self.expect("punct", "=")
        functional = False
        t = self.peek()
        if t.kind == "ident" and t.text == "functional":
            self.next()
            functional = True
        opt = self.expect("ident")
        if "::" not in opt.text:
            raise SfError("expected an op (namespace::name), found '%s'" % opt.text, opt.line, opt.col)
        self.expect("punct", "(")
        args = []
        if not self.accept("punct", ")"):
            while True:
                kw = None
                if self.peek().kind == "ident" and self.peek(1).kind == "punct" and self.peek(1).text == "=":
                    kw = self.next().text
                    self.next()
                args.append((kw, self.parse_expr()))
                if self.accept("punct", ")"):
                    break
                self.expect("punct", ",")
        self.end_of_line()
        return Stmt(results, functional, opt.text, args, opt.line, opt.col)

    def parse_expr(self):
        t = self.peek()
        if t.kind == "value":
            self.next()
            return ("value", t.text, t.line, t.col)
        if t.kind == "punct" and t.text == "[":
            self.next()
            items = []
            if not self.accept("punct", "]"):
                while True:
                    items.append(self.parse_expr())
                    if self.accept("punct", "]"):
                        break
                    self.expect("punct", ",")
            return ("list", items)
        if t.kind == "string":
            self.next()
            return ("str", re.sub(r"\\(.)", r"\1", t.text[1:-1]))
        if t.kind == "ident":
            if t.text in ("true", "false"):
                self.next()
                return ("bool", t.text == "true")
            if t.text == "None":
                self.next()
                return ("none",)
            if t.text in DTYPES:
                self.next()
                return ("dtype", t.text)
        return self.parse_arith()

    # arithmetic: ints over rank/world; a float only as a literal with optional '-'
    def parse_arith(self):
        e = self.parse_term()
        while self.peek().kind == "punct" and self.peek().text in "+-":
            op = self.next()
            rhs = self.parse_term()
            e = self.binop(op, e, rhs)
        return e

    def parse_term(self):
        e = self.parse_unary()
        while self.peek().kind == "punct" and self.peek().text in ("*", "/", "%"):
            op = self.next()
            rhs = self.parse_unary()
            e = self.binop(op, e, rhs)
        return e

    def binop(self, op, a, b):
        if a[0] != "int" or b[0] != "int":
            raise SfError("'%s' takes integer expressions" % op.text, op.line, op.col)
        return ("int", ("bin", op.text, a[1], b[1], op.line, op.col))

    def parse_unary(self):
        t = self.peek()
        if t.kind == "punct" and t.text == "-":
            self.next()
            e = self.parse_unary()
            if e[0] == "float":
                return ("float", -e[1])
            if e[0] == "int":
                if e[1][0] == "lit":
                    return ("int", ("lit", -e[1][1]))
                return ("int", ("neg", e[1]))
            raise SfError("'-' takes a number", t.line, t.col)
        return self.parse_primary()

    def parse_primary(self):
        t = self.next()
        if t.kind == "int":
            return ("int", ("lit", int(t.text)))
        if t.kind == "float":
            return ("float", float(t.text))
        if t.kind == "ident":
            if t.text == "rank":
                return ("int", ("rank",))
            if t.text == "world":
                return ("int", ("world",))
            if t.text == "inf":
                return ("float", math.inf)
            if t.text == "nan":
                return ("float", math.nan)
        if t.kind == "punct" and t.text == "(":
            e = self.parse_arith()
            self.expect("punct", ")")
            return e
        raise SfError("expected an argument, found %s" % self.describe(t), t.line, t.col)


def parse(text):
    return Parser(text).parse()


def eval_int(e, rank, world):
    k = e[0]
    if k == "lit":
        return e[1]
    if k == "rank":
        return rank
    if k == "world":
        return world
    if k == "neg":
        return -eval_int(e[1], rank, world)
    op, a, b = e[1], eval_int(e[2], rank, world), eval_int(e[3], rank, world)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise SfError("division by zero in rank/world expression", e[4], e[5])
    return a // b if op == "/" else a % b


# ---------------------------------------------------------------------------
# c10d:: and symm_mem:: ops over torch.distributed (gloo)

def _parse_schema(s):
    """'name(Type a, Type b=def, *, Type c) -> R' -> (name, [(arg, type, default, kwonly)])."""
    name, rest = s.split("(", 1)
    argstr = rest[:rest.index(") ->")]
    args, kwonly = [], False
    for part in [p.strip() for p in argstr.split(",") if p.strip()]:
        if part == "*":
            kwonly = True
            continue
        decl, _, default = part.partition("=")
        typ, argname = decl.rsplit(" ", 1)
        typ = re.sub(r"\([a-z]!?\)", "", typ)
        dflt = _NODEFAULT
        if default:
            dflt = default.strip("'\"")
        args.append((argname, typ, dflt, kwonly))
    return name, args


_NODEFAULT = object()

DIST_SCHEMAS = [
    "c10d::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
    "c10d::all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)",
    "c10d::all_reduce_coalesced(Tensor[] inputs, str reduce_op, str group_name) -> Tensor[]",
    "c10d::all_reduce_coalesced_(Tensor[](a!) inputs, str reduce_op, str group_name) -> Tensor[](a!)",
    "c10d::all_gather_into_tensor(Tensor input, int group_size, str group_name) -> Tensor",
    "c10d::all_gather_into_tensor_coalesced(Tensor[] inputs, int group_size, str group_name) -> Tensor[]",
    "c10d::all_gather_into_tensor_out(Tensor input, int group_size, str group_name, *, Tensor(a!) out) -> Tensor(a!)",
    "c10d::reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name) -> Tensor",
    "c10d::reduce_scatter_tensor_coalesced(Tensor[] inputs, str reduce_op, int group_size, str group_name) -> Tensor[]",
    "c10d::all_to_all_single(Tensor input, SymInt[] output_split_sizes, SymInt[] input_split_sizes, str group_name) -> Tensor",
    "c10d::broadcast(Tensor input, int src, str group_name) -> Tensor",
    "c10d::broadcast_(Tensor(a!) input, int src, str group_name) -> Tensor(a!)",
    "c10d::wait_tensor(Tensor tensor) -> Tensor",
    "c10d::isend(Tensor(a) input, int dst, int tag, str group_name) -> Tensor(a)",
    "c10d::irecv_(Tensor(a!) out, int src, int tag, str group_name) -> Tensor(a!)",
    "c10d::batch_isend_irecv(str[] op_types, int[] peers, int[] tags, Tensor(a!)[] tensors, str group_name) -> Tensor(a)[]",
    "symm_mem::multimem_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)",
    "symm_mem::multimem_one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
    "symm_mem::multimem_one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) -> Tensor(a!)",
    "symm_mem::multimem_all_gather_out(Tensor input, str group_name, Tensor(a!) out) -> Tensor(a!)",
    "symm_mem::one_shot_all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor",
    "symm_mem::one_shot_all_reduce_out(Tensor input, str reduce_op, str group_name, Tensor(a!) out) -> Tensor(a!)",
    "symm_mem::one_shot_all_reduce_copy(Tensor symm_buffer, Tensor local_input, str reduce_op, str group_name) -> Tensor",
    "symm_mem::one_shot_all_reduce_copy_out(Tensor symm_buffer, Tensor local_input, str reduce_op, str group_name, Tensor(a!) out) -> Tensor(a!)",
    "symm_mem::two_shot_all_reduce_(Tensor(a!) input, str reduce_op, str group_name) -> Tensor(a!)",
    "symm_mem::two_shot_all_reduce_out(Tensor(a!) input, str reduce_op, str group_name, Tensor(b!) output) -> Tensor(b!)",
    "symm_mem::all_gather_out(Tensor input, str group_name, Tensor(a!) out) -> Tensor(a!)",
    "symm_mem::reduce_scatter_out(Tensor(a!) input, str group_name, bool split_last_dim, Tensor(b!) output) -> Tensor(b!)",
    "symm_mem::tile_reduce(Tensor in_tile, Tensor(a!) out_tile, int root, str group_name, str reduce_op='sum') -> ()",
]
DIST_OPS = dict(_parse_schema(s) for s in DIST_SCHEMAS)
REDUCE_OPS = ("sum", "avg", "max", "min", "product")


def _kind_ok(typ, v):
    if typ == "Tensor":
        return isinstance(v, torch.Tensor)
    if typ == "Tensor[]":
        return isinstance(v, list) and all(isinstance(x, torch.Tensor) for x in v)
    if typ == "str":
        return isinstance(v, str)
    if typ == "str[]":
        return isinstance(v, list) and all(isinstance(x, str) for x in v)
    if typ == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if typ in ("int[]", "SymInt[]"):
        return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
    if typ == "bool":
        return isinstance(v, bool)
    return True


def _kind_name(v):
    if isinstance(v, torch.Tensor):
        return "Tensor"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if v is None:
        return "None"
    if isinstance(v, list):
        return "list"
    return type(v).__name__


def bind_dist(op, args, kwargs):
    schema = DIST_OPS[op]
    bound = {}
    positional = [a for a in schema if not a[3]]
    if len(args) > len(positional):
        raise OpError(op, "takes %d positional arguments but %d were given" % (len(positional), len(args)))
    for (name, typ, _, _), v in zip(positional, args):
        bound[name] = v
    for k, v in kwargs.items():
        if not any(a[0] == k for a in schema):
            raise OpError(op, "unknown argument '%s'" % k)
        if k in bound:
            raise OpError(op, "argument '%s' given twice" % k)
        bound[k] = v
    for name, typ, dflt, _ in schema:
        if name not in bound:
            if dflt is _NODEFAULT:
                raise OpError(op, "missing argument '%s'" % name)
            bound[name] = dflt
        if not _kind_ok(typ, bound[name]):
            raise OpError(op, "argument '%s' must be %s, got %s" % (name, typ, _kind_name(bound[name])))
    return bound


# dtypes gloo cannot move (or reduce): moved as raw bytes
_WIRE = (torch.bfloat16, torch.bool)


def _wire(t):
    """A view gloo can move: the raw bytes of a contiguous bf16/bool tensor."""
    return t.reshape(-1).view(torch.uint8) if t.dtype in _WIRE else t


class Dist:
    """One rank's torch.distributed state for a program run."""

    def __init__(self, rank, world):
        self.rank, self.world = rank, world
        self.works = []        # [tensor, work or None, finalize or None]
        self.self_sends = {}   # tag -> [tensors] posted isends to self, unmatched
        self.self_recvs = {}   # tag -> [entries] posted irecvs from self, unmatched
        self.inited = False

    def dist(self):
        import torch.distributed as dist
        return dist

    # -- groups and checks
    def group(self, op, name):
        if name != "world":
            raise OpError(op, "unknown group '%s' (this runner knows only \"world\")" % name)

    def check_reduce_op(self, op, r):
        if r not in REDUCE_OPS:
            raise OpError(op, 'unknown reduce_op "%s" (expected sum, avg, max, min or product)' % r)

    def check_peer(self, op, p):
        if not 0 <= p < self.world:
            raise OpError(op, "peer %d is out of range for a group of %d ranks" % (p, self.world))

    # -- primitives
    def gather_list(self, t):
        """[t of rank 0, ..., t of rank W-1], each contiguous."""
        t = t.contiguous()
        if self.world == 1:
            return [t.clone()]
        parts = [torch.empty_like(t) for _ in range(self.world)]
        self.dist().all_gather([_wire(p) for p in parts], _wire(t))
        return parts

    def reduce_inplace(self, op, t, rop):
        """t := reduce over ranks of t."""
        self.check_reduce_op(op, rop)
        if t.dtype == torch.bool and rop == "avg":
            raise OpError(op, "reduce op avg is not defined on bool tensors")
        dist = self.dist()
        native = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN,
                  "product": dist.ReduceOp.PRODUCT}
        if rop in native and t.dtype not in _WIRE and self.world > 1:
            buf = t.contiguous()
            dist.all_reduce(buf, native[rop])
            if buf.data_ptr() != t.data_ptr() or buf.stride() != t.stride():
                t.copy_(buf)
            return t
        # gloo has no AVG, no bf16 and no bool: gather, then fold in rank order.
        parts = self.gather_list(t)
        t.copy_(self.fold(parts, rop))
        return t

    @staticmethod
    def fold(parts, rop):
        dt = parts[0].dtype
        if dt == torch.bool:
            if rop in ("sum", "max"):
                acc = parts[0].clone()
                for p in parts[1:]:
                    acc |= p
            else:
                acc = parts[0].clone()
                for p in parts[1:]:
                    acc &= p
            return acc
        acc_dt = torch.float32 if dt in (torch.bfloat16, torch.float16) else dt
        acc = parts[0].to(acc_dt)
        for p in parts[1:]:
            p = p.to(acc_dt)
            if rop in ("sum", "avg"):
                acc = acc + p
            elif rop == "product":
                acc = acc * p
            elif rop == "max":
                acc = torch.maximum(acc, p)
            else:
                acc = torch.minimum(acc, p)
        if rop == "avg":
            if acc.is_floating_point():
                acc = acc / len(parts)
            else:
                acc = torch.div(acc, len(parts), rounding_mode="trunc")
        return acc.to(dt)

    def group_size_check(self, op, gs):
        if gs < 1:
            raise OpError(op, "group_size must be >= 1, got %d" % gs)
        if gs != self.world:
            raise OpError(op, "group_size is %d but group 'world' has %d ranks" % (gs, self.world))

    def gathered(self, op, t, gs):
        self.group_size_check(op, gs)
        shape = list(t.shape) or [1]
        shape[0] *= gs
        parts = self.gather_list(t)
        return torch.cat([p.reshape(-1) for p in parts]).reshape(shape)

    def scattered(self, op, t, rop, gs):
        self.check_reduce_op(op, rop)
        self.group_size_check(op, gs)
        if t.dim() < 1:
            raise OpError(op, "expected an input with at least one dimension, got %s" % type_str(t))
        if t.shape[0] % gs:
            raise OpError(op, "dimension 0 of the input (%s) must be divisible by group_size %d" %
                          (type_str(t), gs))
        full = t.contiguous().clone()
        self.reduce_inplace(op, full, rop)
        return full.chunk(gs, 0)[self.rank].clone() if t.shape[0] else full.clone()

    def check_out(self, op, out, dtype, shape, argname="out"):
        if out.dtype != dtype or list(out.shape) != list(shape):
            raise OpError(op, "expected %s to be %s[%s], got %s" % (
                argname, DTYPE_NAMES.get(dtype, str(dtype)), ", ".join(map(str, shape)), type_str(out)))

    # -- point to point
    def post_send(self, op, t, peer, tag):
        self.check_peer(op, peer)
        if peer == self.rank:
            rq = self.self_recvs.get(tag)
            if rq:
                entry = rq.pop(0)
                entry[0].copy_(t)
                entry[1] = True
            else:
                self.self_sends.setdefault(tag, []).append(t)
            self.works.append([t, None, None])
            return
        buf = t.contiguous()
        w = self.dist().isend(_wire(buf), peer, tag=tag)
        self.works.append([t, w, None])

    def post_recv(self, op, t, peer, tag):
        self.check_peer(op, peer)
        if peer == self.rank:
            sq = self.self_sends.get(tag)
            entry = [t, False]
            if sq:
                t.copy_(sq.pop(0))
                entry[1] = True
            else:
                self.self_recvs.setdefault(tag, []).append(entry)

            def fin(entry=entry, tag=tag):
                if not entry[1]:
                    raise OpError("c10d::wait_tensor", "irecv from the own rank (tag %d) waited on "
                                  "before a matching isend was posted: deadlock" % tag, rc=1)
            self.works.append([t, None, fin])
            return
        if t.is_contiguous():
            buf, fin = t, None
        else:
            buf = torch.empty(t.shape, dtype=t.dtype)

            def fin(buf=buf, t=t):
                t.copy_(buf)
        w = self.dist().irecv(_wire(buf), peer, tag=tag)
        self.works.append([t, w, fin])

    def wait(self, t):
        keep = []
        todo = []
        for e in self.works:
            if e[0] is t or (e[0].data_ptr() == t.data_ptr() and e[0].shape == t.shape
                             and e[0].stride() == t.stride()):
                todo.append(e)
            else:
                keep.append(e)
        self.works = keep
        for tensor, w, fin in todo:
            if w is not None:
                w.wait()
            if fin is not None:
                fin()
        return t

    def wait_all(self):
        while self.works:
            self.wait(self.works[0][0])

    # -- the ops
    def call(self, op, args, kwargs):
        a = bind_dist(op, args, kwargs)
        if "group_name" in a:
            self.group(op, a["group_name"])
        name = op.split("::")[1]
        short = op.split("::")[0]
        if short == "c10d":
            return self.c10d(op, name, a)
        return self.symm_mem(op, name, a)

    def c10d(self, op, name, a):
        if name == "all_reduce":
            out = a["input"].clone(memory_format=torch.contiguous_format)
            return self.reduce_inplace(op, out, a["reduce_op"])
        if name == "all_reduce_":
            return self.reduce_inplace(op, a["input"], a["reduce_op"])
        if name == "all_reduce_coalesced":
            self.check_reduce_op(op, a["reduce_op"])
            return [self.reduce_inplace(op, t.clone(memory_format=torch.contiguous_format), a["reduce_op"])
                    for t in a["inputs"]]
        if name == "all_reduce_coalesced_":
            self.check_reduce_op(op, a["reduce_op"])
            for t in a["inputs"]:
                self.reduce_inplace(op, t, a["reduce_op"])
            return a["inputs"]
        if name == "all_gather_into_tensor":
            return self.gathered(op, a["input"], a["group_size"])
        if name == "all_gather_into_tensor_coalesced":
            return [self.gathered(op, t, a["group_size"]) for t in a["inputs"]]
        if name == "all_gather_into_tensor_out":
            t, out = a["input"], a["out"]
            self.group_size_check(op, a["group_size"])
            shape = list(t.shape) or [1]
            shape[0] *= a["group_size"]
            self.check_out(op, out, t.dtype, shape)
            out.copy_(self.gathered(op, t, a["group_size"]))
            return out
        if name == "reduce_scatter_tensor":
            return self.scattered(op, a["input"], a["reduce_op"], a["group_size"])
        if name == "reduce_scatter_tensor_coalesced":
            self.check_reduce_op(op, a["reduce_op"])
            return [self.scattered(op, t, a["reduce_op"], a["group_size"]) for t in a["inputs"]]
        if name == "all_to_all_single":
            return self.all_to_all_single(op, a["input"], a["output_split_sizes"], a["input_split_sizes"])
        if name == "broadcast":
            self.check_peer(op, a["src"])
            out = a["input"].clone(memory_format=torch.contiguous_format)
            if self.world > 1:
                self.dist().broadcast(_wire(out), a["src"])
            return out
        if name == "broadcast_":
            self.check_peer(op, a["src"])
            t = a["input"]
            if self.world > 1:
                buf = t.contiguous()
                self.dist().broadcast(_wire(buf), a["src"])
                if buf.data_ptr() != t.data_ptr() or buf.stride() != t.stride():
                    t.copy_(buf)
            return t
        if name == "wait_tensor":
            return self.wait(a["tensor"])
        if name == "isend":
            self.post_send(op, a["input"], a["dst"], a["tag"])
            return a["input"]
        if name == "irecv_":
            self.post_recv(op, a["out"], a["src"], a["tag"])
            return a["out"]
        if name == "batch_isend_irecv":
            kinds, peers, tags, ts = a["op_types"], a["peers"], a["tags"], a["tensors"]
            if not (len(kinds) == len(peers) == len(tags) == len(ts)):
                raise OpError(op, "op_types, peers, tags and tensors must have one entry each per "
                              "operation (got %d, %d, %d, %d)" % (len(kinds), len(peers), len(tags), len(ts)))
            for k in kinds:
                if k not in ("isend", "irecv"):
                    raise OpError(op, 'op_types entries must be "isend" or "irecv", got "%s"' % k)
            for k, p, tg, t in zip(kinds, peers, tags, ts):
                self.check_peer(op, p)
            for k, p, tg, t in zip(kinds, peers, tags, ts):
                if k == "isend":
                    self.post_send(op, t, p, tg)
                else:
                    self.post_recv(op, t, p, tg)
            return list(ts)
        raise OpError(op, "not implemented in the reference runner")

    def all_to_all_single(self, op, t, out_splits, in_splits):
        if t.dim() < 1:
            raise OpError(op, "expected at least 1-D input, got %s" % type_str(t))
        W = self.world
        if in_splits and sum(in_splits) != t.shape[0]:
            raise OpError(op, "input_split_sizes sum to %d but the input has %d rows" % (sum(in_splits), t.shape[0]))
        if in_splits and len(in_splits) != W or out_splits and len(out_splits) != W:
            raise OpError(op, "split sizes must have one entry per rank (%d)" % W)
        if not in_splits:
            if t.shape[0] % W:
                raise OpError(op, "dimension 0 (%d) is not divisible by %d ranks" % (t.shape[0], W))
            in_splits = [t.shape[0] // W] * W
        shape = list(t.shape)
        if out_splits:
            shape[0] = sum(out_splits)
        out = torch.empty(shape, dtype=t.dtype)
        src = t.contiguous()
        if W == 1:
            out.copy_(src)
            return out
        # Every rank's rows for every other rank: exact data movement via all_gather
        # of the (padded) input and of the split tables.
        splits = self.gather_list(torch.tensor(in_splits, dtype=torch.int64))
        rows = max(int(s.sum()) for s in splits)
        padded = torch.zeros([rows] + shape[1:], dtype=t.dtype)
        padded[:src.shape[0]] = src
        allin = self.gather_list(padded)
        pieces = []
        for j in range(W):
            sj = splits[j].tolist()
            start = sum(sj[:self.rank])
            pieces.append(allin[j][start:start + sj[self.rank]])
        got = torch.cat(pieces) if pieces else out
        if list(got.shape) != shape:
            raise OpError(op, "output_split_sizes do not match what the peers send (%d rows received, %d expected)"
                          % (got.shape[0], shape[0]))
        out.copy_(got)
        return out

    def symm_mem(self, op, name, a):
        if name in ("multimem_all_reduce_", "two_shot_all_reduce_"):
            return self.reduce_inplace(op, a["input"], a["reduce_op"])
        if name in ("multimem_one_shot_all_reduce", "one_shot_all_reduce"):
            self.check_reduce_op(op, a["reduce_op"])
            return self.reduce_inplace(op, a["input"].clone(memory_format=torch.contiguous_format), a["reduce_op"])
        if name in ("multimem_one_shot_all_reduce_out", "one_shot_all_reduce_out"):
            t, out = a["input"], a["out"]
            self.check_reduce_op(op, a["reduce_op"])
            self.check_out(op, out, t.dtype, t.shape)
            out.copy_(self.reduce_inplace(op, t.clone(), a["reduce_op"]))
            return out
        if name in ("one_shot_all_reduce_copy", "one_shot_all_reduce_copy_out"):
            buf, t = a["symm_buffer"], a["local_input"]
            self.check_reduce_op(op, a["reduce_op"])
            if buf.dtype != t.dtype or buf.numel() < t.numel():
                raise OpError(op, "symm_buffer %s cannot hold local_input %s" % (type_str(buf), type_str(t)))
            if name.endswith("_out"):
                self.check_out(op, a["out"], t.dtype, t.shape)
            staged = buf.view(-1)[:t.numel()].view(t.shape)
            staged.copy_(t)
            res = self.reduce_inplace(op, staged.clone(), a["reduce_op"])
            if name.endswith("_out"):
                a["out"].copy_(res)
                return a["out"]
            return res
        if name == "two_shot_all_reduce_out":
            t, out = a["input"], a["output"]
            self.check_reduce_op(op, a["reduce_op"])
            self.check_out(op, out, t.dtype, t.shape, "output")
            self.reduce_inplace(op, t, a["reduce_op"])
            out.copy_(t)
            return out
        if name in ("all_gather_out", "multimem_all_gather_out"):
            t, out = a["input"], a["out"]
            if out.dtype != t.dtype or t.numel() == 0 or out.numel() % t.numel():
                raise OpError(op, "out %s is not a whole number of inputs %s" % (type_str(out), type_str(t)))
            if out.numel() != t.numel() * self.world:
                raise OpError(op, "out %s does not hold %d inputs %s" % (type_str(out), self.world, type_str(t)))
            parts = self.gather_list(t)
            out.copy_(torch.cat([p.reshape(-1) for p in parts]).view(out.shape))
            return out
        if name == "reduce_scatter_out":
            t, out = a["input"], a["output"]
            if out.dtype != t.dtype or out.numel() == 0 or t.numel() % out.numel():
                raise OpError(op, "output %s is not a whole share of input %s" % (type_str(out), type_str(t)))
            W = self.world
            if a["split_last_dim"]:
                last = t.shape[-1]
                if last % W:
                    raise OpError(op, "last dim of %s not divisible by %d ranks" % (type_str(t), W))
                chunks = t.reshape(list(t.shape[:-1]) + [W, last // W])
                lead = chunks.transpose(-2, 0).contiguous()
            else:
                lead = t.contiguous()
            if out.numel() * W != t.numel():
                raise OpError(op, "output %s is not 1/%d of input %s" % (type_str(out), W, type_str(t)))
            full = lead.clone()
            self.reduce_inplace(op, full, "sum")
            out.copy_(full.reshape(-1)[self.rank * out.numel():(self.rank + 1) * out.numel()].view(out.shape))
            return out
        if name == "tile_reduce":
            tin, tout, root, rop = a["in_tile"], a["out_tile"], a["root"], a["reduce_op"]
            self.check_reduce_op(op, rop)
            self.check_out(op, tout, tin.dtype, tin.shape, "out_tile")
            self.check_peer(op, root)
            res = self.reduce_inplace(op, tin.clone(memory_format=torch.contiguous_format), rop)
            if self.rank == root:
                tout.copy_(res)
            return None
        raise OpError(op, "not implemented in the reference runner")


def type_str(t):
    return "%s[%s]" % (DTYPE_NAMES.get(t.dtype, str(t.dtype)), ", ".join(str(s) for s in t.shape))


# ---------------------------------------------------------------------------
# aten:: ops

def _schema_positional_scalartype(packet, overload, idx):
    """Whether argument position idx of the op(s) takes a ScalarType positionally."""
    try:
        names = [overload] if overload else packet.overloads()
        for ov in names:
            sch = getattr(packet, ov)._schema
            pos = [a for a in sch.arguments if not a.kwarg_only]
            if idx < len(pos) and "ScalarType" in str(pos[idx].type):
                return True
    except Exception:
        return True
    return False


# PyTorch 2.x's as_strided_scatter (clone_preserve_strides: the clone keeps self's
# whole storage and storage offset); only the conformance driver turns it on, to
# tell a 1.13-vs-2.x difference from a disagreement.
AS_STRIDED_SCATTER_2X = False


def _as_strided_scatter_2x(self, src, size, stride, storage_offset=None):
    numel = self.untyped_storage().nbytes() // self.element_size() if hasattr(self, "untyped_storage") \
        else self.storage().size()
    full = self.as_strided([numel], [1], 0).clone()
    out = full.as_strided(self.size(), self.stride(), self.storage_offset())
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def call_aten(op, args, kwargs):
    rest = op.split("::", 1)[1]
    name, _, overload = rest.partition(".")
    if AS_STRIDED_SCATTER_2X and name == "as_strided_scatter":
        try:
            return _as_strided_scatter_2x(*args, **kwargs)
        except Exception as e:
            raise OpError(op, str(e).strip().splitlines()[0])
    try:
        packet = getattr(torch.ops.aten, name)
        fn = getattr(packet, overload) if overload else packet
    except (AttributeError, RuntimeError):
        raise OpError(op, "unknown op %s" % op)
    # A dtype given positionally to a factory (aten::zeros([4], f32)) is its dtype=.
    args = list(args)
    for i, v in enumerate(args):
        if isinstance(v, torch.dtype) and not _schema_positional_scalartype(packet, overload, i):
            if "dtype" in kwargs:
                raise OpError(op, "dtype given twice")
            kwargs = dict(kwargs, dtype=v)
            del args[i]
            break
    try:
        if _bool_in_scalar_slot(packet, overload, args, kwargs):
            return _call_python_api(name, args, kwargs)
        return fn(*args, **kwargs)
    except Exception as e:  # PyTorch refused
        msg = str(e).strip().splitlines()
        msg = msg[0] if msg else type(e).__name__
        raise OpError(op, msg)


def _bool_in_scalar_slot(packet, overload, args, kwargs):
    """Whether a Python bool goes to a `Scalar` parameter. torch.ops (1.13) turns such
    a bool into an int Scalar (aten::full([2], true) would be i64), unlike PyTorch's
    Python API and symmflow, which keep it a bool Scalar."""
    if not any(isinstance(v, bool) for v in list(args) + list(kwargs.values())):
        return False
    try:
        names = [overload] if overload else packet.overloads()
        for ov in names:
            sch = getattr(packet, ov)._schema
            pos = [a for a in sch.arguments if not a.kwarg_only]
            for i, v in enumerate(args):
                if isinstance(v, bool) and i < len(pos) and "number" in str(pos[i].type):
                    return True
            for a in sch.arguments:
                if isinstance(kwargs.get(a.name), bool) and "number" in str(a.type):
                    return True
    except Exception:
        return False
    return False


def _call_python_api(name, args, kwargs):
    """The same ATen op through PyTorch's Python API (which keeps bool Scalars bool)."""
    if name.endswith("_") and args and isinstance(args[0], torch.Tensor):
        return getattr(args[0], name)(*args[1:], **kwargs)
    if hasattr(torch, name):
        return getattr(torch, name)(*args, **kwargs)
    return getattr(args[0], name)(*args[1:], **kwargs)


# ---------------------------------------------------------------------------
# running one rank


def _read_inputs(g, rank, world, seed, inputs_dir):
    env = {}
    for k, (name, typ) in enumerate(g.params):
        base = name[1:]
        path = None
        if inputs_dir:
            for cand in ("%s.rank%d.npy" % (base, rank), "%s.npy" % base):
                p = os.path.join(inputs_dir, cand)
                if os.path.exists(p):
                    path = p
                    break
        if path is None:
            if typ.scalar:
                env[name] = fill_scalar(typ.dtype, seed, k, rank)
            else:
                env[name] = fill_tensor(typ.dtype, typ.shape, seed, k, rank)
            continue
        try:
            arr, dname = load_npy(path)
        except Exception as e:
            raise OpError("input %s" % name, "cannot read %s: %s" % (path, e))
        if typ.scalar:
            if arr.shape != () or dname != typ.dtype:
                raise OpError("input %s" % name, "%s holds %s%s but the signature says %s" %
                              (path, dname, list(arr.shape), typ))
            env[name] = {"i64": int, "f64": float, "bool": bool}[typ.dtype](arr[()])
            continue
        if dname != typ.dtype or list(arr.shape) != list(typ.shape):
            raise OpError("input %s" % name, "%s holds %s[%s] but the signature says %s" % (
                path, dname, ", ".join(map(str, arr.shape)), typ))
        env[name] = numpy_to_tensor(arr, typ.dtype).contiguous()
    return env


def _eval_arg(e, env, rank, world):
    k = e[0]
    if k == "value":
        if e[1] not in env:
            raise SfError("use of undefined value %s" % e[1], e[2], e[3])
        return env[e[1]]
    if k == "list":
        return [_eval_arg(x, env, rank, world) for x in e[1]]
    if k == "int":
        return eval_int(e[1], rank, world)
    if k == "float":
        return e[1]
    if k == "str":
        return e[1]
    if k == "bool":
        return e[1]
    if k == "none":
        return None
    if k == "dtype":
        return DTYPES[e[1]]
    raise AssertionError(e)


def _flatten_results(r):
    if r is None:
        return []
    if isinstance(r, (tuple, list)):
        out = []
        for x in r:
            if isinstance(x, (list, tuple)):
                out.extend(x)
            else:
                out.append(x)
        return out
    return [r]


def check_ssa(g):
    """Definitions before uses, no redefinition (like the symmflow parser)."""
    defined = {name: 0 for name, _ in g.params}

    def uses(e):
        if e[0] == "value":
            yield e
        elif e[0] == "list":
            for x in e[1]:
                yield from uses(x)
    for s in g.stmts:
        for _, e in s.args:
            for u in uses(e):
                if u[1] not in defined:
                    raise SfError("use of undefined value %s" % u[1], u[2], u[3])
        for r in s.results:
            if r.text in defined:
                raise SfError("value %s is already defined (at line %d)" % (r.text, defined[r.text]), r.line, r.col)
            defined[r.text] = r.line
        if s.functional:
            raise SfError("the functional form is not supported by the reference runner "
                          "(it runs user programs only)", s.line, s.col)
        ns = s.op.split("::")[0]
        if ns not in ("aten", "c10d", "symm_mem"):
            raise SfError("unknown op %s" % s.op, s.line, s.col)
        if ns != "aten" and s.op not in DIST_OPS:
            raise SfError("unknown op %s" % s.op, s.line, s.col)
        if ns == "aten":
            name, _, overload = s.op.split("::", 1)[1].partition(".")
            try:
                packet = getattr(torch.ops.aten, name)
                if overload:
                    getattr(packet, overload)
            except (AttributeError, RuntimeError):
                raise SfError("unknown op %s" % s.op, s.line, s.col)
    for v in g.ret_values:
        if v.text not in defined:
            raise SfError("use of undefined value %s" % v.text, v.line, v.col)
    if len(g.ret_values) != len(g.rets):
        raise SfError("return gives %d values but the signature says %d" % (len(g.ret_values), len(g.rets)),
                      g.ret_line, 1)


def _to_meta(v):
    if isinstance(v, torch.Tensor):
        return v if v.is_meta else torch.empty_strided(v.size(), v.stride(), dtype=v.dtype, device="meta")
    if isinstance(v, list):
        return [_to_meta(x) for x in v]
    if isinstance(v, dict):
        return {k: _to_meta(x) for k, x in v.items()}
    return v


def _has_meta(v):
    if isinstance(v, torch.Tensor):
        return v.is_meta
    if isinstance(v, (list, tuple)):
        return any(_has_meta(x) for x in v)
    if isinstance(v, dict):
        return any(_has_meta(x) for x in v.values())
    return False


def run_rank(g, rank, world, seed, inputs_dir, out_dir, check_returns=True, meta_state=None):
    """Runs the program on one rank; returns the returned values; raises SfError / OpError.

    With meta_state (a dict), an aten op that PyTorch refuses on the actual values
    is run again on meta tensors (types only); when that succeeds the run goes on
    on meta tensors, and meta_state["error"] keeps the first refusal."""
    env = _read_inputs(g, rank, world, seed, inputs_dir)
    inputs = {name: env[name] for name, _ in g.params}
    dist = Dist(rank, world)
    for s in g.stmts:
        args, kwargs = [], {}
        for kw, e in s.args:
            v = _eval_arg(e, env, rank, world)
            if kw is None:
                if kwargs:
                    raise SfError("a positional argument follows a keyword argument", s.line, s.col)
                args.append(v)
            else:
                if kw in kwargs:
                    raise SfError("keyword argument %s is given twice" % kw, s.line, s.col)
                kwargs[kw] = v
        ns = s.op.split("::")[0]
        if ns == "aten":
            if s.op.split("::")[1].split(".")[0] in ("rand", "randn"):
                raise OpError(s.op, "symmflow's seeded random factories have no PyTorch equivalent")
            if meta_state is not None and _has_meta([args, kwargs]):
                res = call_aten(s.op, _to_meta(args), _to_meta(kwargs))
            else:
                try:
                    res = call_aten(s.op, args, kwargs)
                except OpError as e:
                    if meta_state is None:
                        raise
                    try:
                        res = call_aten(s.op, _to_meta(args), _to_meta(kwargs))
                    except OpError:
                        raise e
                    meta_state.setdefault("error", e)
        else:
            try:
                res = dist.call(s.op, args, kwargs)
            except OpError:
                raise
            except Exception as e:
                if os.environ.get("SF_TORCH_DEBUG"):
                    traceback.print_exc()
                msg = str(e).strip().splitlines()
                raise OpError(s.op, msg[0] if msg else type(e).__name__)
        vals = _flatten_results(res)
        if s.results:
            if len(vals) != len(s.results):
                raise SfError("%s returns %d tensor%s, but %d name%s given" % (
                    s.op, len(vals), "" if len(vals) == 1 else "s", len(s.results),
                    " is" if len(s.results) == 1 else "s are"), s.line, s.col)
            for r, v in zip(s.results, vals):
                env[r.text] = v
    dist.wait_all()
    outs = [env[v.text] for v in g.ret_values]
    for i, (v, typ) in enumerate(zip(outs, g.rets)):
        if typ.scalar:
            ok = not isinstance(v, torch.Tensor)
            got = _kind_name(v)
        else:
            ok = isinstance(v, torch.Tensor) and DTYPE_NAMES.get(v.dtype) == typ.dtype and \
                list(v.shape) == list(typ.shape)
            got = type_str(v) if isinstance(v, torch.Tensor) else _kind_name(v)
        if not ok and check_returns:
            raise SfError("return value %d is %s but the signature says %s" % (i, got, typ), g.ret_line, 1)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        for i, v in enumerate(outs):
            save_npy(os.path.join(out_dir, "out%d.rank%d.npy" % (i, rank)), v)
        for name, typ in g.params:
            if not typ.scalar:
                save_npy(os.path.join(out_dir, "%s.rank%d.npy" % (name[1:], rank)), inputs[name])
    return outs


def format_error(e, filename):
    if isinstance(e, SfError):
        return "%s:%d:%d: %s" % (filename, e.line, e.col, e.msg)
    return "error: %s: %s" % (e.op, e.msg)


def _rank_main(g, rank, world, seed, inputs_dir, out_dir, store_path, errfile, filename):
    """Body of one forked rank process; returns the exit code."""
    import torch.distributed as tdist
    os.environ["GLOO_SOCKET_IFNAME"] = "lo"
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    torch.set_num_threads(1)
    rc = 0
    try:
        tdist.init_process_group("gloo", init_method="file://" + store_path, rank=rank,
                                 world_size=world, timeout=datetime.timedelta(seconds=60))
        run_rank(g, rank, world, seed, inputs_dir, out_dir)
    except (SfError, OpError) as e:
        rc = e.rc if isinstance(e, OpError) else 2
        with open(errfile, "w") as f:
            f.write(format_error(e, filename) + "\n")
    except BaseException as e:  # noqa: BLE001
        rc = 1
        with open(errfile, "w") as f:
            f.write("error: rank %d: %s\n%s" % (rank, e, traceback.format_exc()))
    try:
        if rc == 0 and tdist.is_initialized():
            tdist.barrier()
            tdist.destroy_process_group()
    except BaseException:
        pass
    return rc


def _run_forked(g, nproc, seed, inputs_dir, out_dir, filename, timeout):
    import multiprocessing as mp
    import time
    ctx = mp.get_context("fork")
    tmp = tempfile.mkdtemp(prefix="sf_torch_")
    store = os.path.join(tmp, "store")
    procs = []

    def target(r):
        code = _rank_main(g, r, nproc, seed, inputs_dir, out_dir, store,
                          os.path.join(tmp, "err.%d" % r), filename)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    for r in range(nproc):
        p = ctx.Process(target=target, args=(r,))
        p.start()
        procs.append(p)
    deadline = time.time() + timeout
    first_fail, fail_time = None, None
    while True:
        alive = [p for p in procs if p.exitcode is None]
        for r, p in enumerate(procs):
            if p.exitcode not in (None, 0) and first_fail is None:
                first_fail, fail_time = r, time.time()
        if not alive:
            break
        now = time.time()
        if now > deadline or (fail_time is not None and now > fail_time + 5):
            for p in alive:
                p.kill()
            for p in alive:
                p.join()
            if first_fail is None:
                first_fail = -1
            break
        alive[0].join(0.02)
    # the ranks' messages, the earliest first: it is the cause, later ones are
    # usually peers that lost their connection to it
    found = []
    for r in range(nproc):
        ef = os.path.join(tmp, "err.%d" % r)
        if os.path.exists(ef):
            with open(ef) as f:
                found.append((os.stat(ef).st_mtime_ns, r, f.read().rstrip("\n")))
    found.sort()
    msgs = [m for _, _, m in found]
    if found and first_fail not in (None, -1) and procs[found[0][1]].exitcode not in (None, 0):
        first_fail = found[0][1]
    for f in os.listdir(tmp):
        try:
            os.remove(os.path.join(tmp, f))
        except OSError:
            pass
    os.rmdir(tmp)
    if first_fail is None:
        return 0, ""
    if first_fail == -1:
        return 1, "error: timed out after %d s\n" % timeout + "\n".join(msgs)
    rc = procs[first_fail].exitcode
    if rc < 0:
        rc = 128 - rc
    # one message per distinct text (every rank usually refuses alike)
    uniq = []
    for m in msgs:
        if m not in uniq:
            uniq.append(m)
    return rc, "\n".join(uniq)


def run_program(text, nproc=1, seed=0, inputs_dir=None, out_dir=None, filename="<program>", timeout=120):
    """Runs a .sf program; returns (exit code, error text). Writes .npy files into out_dir."""
    try:
        g = parse(text)
        check_ssa(g)
        if nproc < 1:
            raise SfError("--nproc must be >= 1", 0, 0)
    except SfError as e:
        return 2, format_error(e, filename)
    if nproc == 1 and not g.uses_dist():
        torch.set_num_threads(1)
        try:
            run_rank(g, 0, 1, seed, inputs_dir, out_dir)
        except (SfError, OpError) as e:
            return (e.rc if isinstance(e, OpError) else 2), format_error(e, filename)
        return 0, ""
    return _run_forked(g, nproc, seed, inputs_dir, out_dir, filename, timeout)


def value_type(v):
    """The .sf type of a value: 'f32[2, 3]', 'i64', ..."""
    if isinstance(v, torch.Tensor):
        return type_str(v)
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "i64"
    return "f64"


def infer_return_types(text, seed=0, inputs_dir=None):
    """Runs a one-rank, aten-only program ignoring its declared return types.

    Returns (types, error): the type string of every returned value and None; or,
    when PyTorch refuses the actual values but accepts the types (an integer
    division by zero, a fill value that overflows, overlapping memory), the types
    from the meta run and that error; or (None, error) when PyTorch refuses the
    types themselves."""
    meta = {}
    try:
        g = parse(text)
        check_ssa(g)
        torch.set_num_threads(1)
        outs = run_rank(g, 0, 1, seed, inputs_dir, None, check_returns=False, meta_state=meta)
        err = format_error(meta["error"], "<program>") if "error" in meta else None
        return [value_type(v) for v in outs], err
    except (SfError, OpError) as e:
        return None, format_error(e, "<program>")


POINTWISE = {"add", "sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt",
             "ge", "where", "clamp", "neg", "abs", "relu", "exp", "log", "sqrt", "rsqrt", "sin",
             "cos", "tanh", "sigmoid", "gelu"}


def elementwise_reference(text, seed=0, inputs_dir=None):
    """PyTorch's result of a one-statement pointwise program computed one element at a
    time (each element alone in a one-element tensor). PyTorch's kernels can give an
    element a different value depending on how it is vectorised (maximum of 0.0 and
    -0.0, Sleef's fmod in floor division, gelu's erf): an element may match either.
    In-place and out= forms are computed by the functional op, cast to the written
    tensor's dtype. Returns a numpy array (as saved), or None when the program is not
    one pointwise op whose result is returned."""
    g = parse(text)
    if len(g.stmts) != 1 or len(g.stmts[0].results) != 1:
        return None
    s = g.stmts[0]
    name = s.op.split("::")[1].split(".")[0]
    functional = name.rstrip("_")
    if s.op.split("::")[0] != "aten" or functional not in POINTWISE:
        return None
    if g.ret_values[0].text != s.results[0].text:
        return None
    torch.set_num_threads(1)
    env = _read_inputs(g, 0, 1, seed, inputs_dir)
    args = [_eval_arg(e, env, 0, 1) for k, e in s.args if k is None]
    kwargs = {k: _eval_arg(e, env, 0, 1) for k, e in s.args if k is not None}
    # the whole op once (on copies: it may write its arguments), for the result type
    full = call_aten(s.op, [a.clone() if isinstance(a, torch.Tensor) else a for a in args],
                     {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in kwargs.items()})
    # in-place and out= forms: the functional op, cast to the written tensor's dtype
    kwargs.pop("out", None)
    op = "aten::" + functional
    tpos = [i for i, v in enumerate(args) if isinstance(v, torch.Tensor)]
    shaped = torch.broadcast_tensors(*[args[i] for i in tpos]) if tpos else []
    out = torch.empty_like(full).reshape(-1)
    for flat in range(full.numel()):
        idx = np.unravel_index(flat, tuple(full.shape)) if full.dim() else ()
        a = list(args)
        for i, b in zip(tpos, shaped):
            a[i] = args[i] if args[i].dim() == 0 else b[tuple(int(j) for j in idx)].reshape(1).clone()
        out[flat] = call_aten(op, a, dict(kwargs)).reshape(-1)[0].to(full.dtype)
    return tensor_to_numpy(out.reshape(full.shape))


def self_test():
    """The fill formula against hand-computed values and the integer-exact version;
    the lexer's `%` rule; Python rounding of rank/world expressions."""
    # seed 0, input 0, rank 0, element 0: x = 0xBF58476D1CE4E5B9 -> h = 4076774786,
    # 4076774786 % 256 = 130 -> (130 - 128) / 16 = 0.125; % 201 = 125 -> 25; % 2 = 0
    assert fill_hash_scalar(0, 0, 0, 0) == 4076774786
    assert float(fill_tensor("f32", [1], 0, 0, 0)[0]) == 0.125
    assert int(fill_tensor("i64", [1], 0, 0, 0)[0]) == 25
    assert bool(fill_tensor("bool", [1], 0, 0, 0)[0]) is False
    for seed, k, r in [(0, 0, 0), (7, 2, 3), (2 ** 64 - 1, 5, 1), (12345, 0, 127)]:
        h = fill_hash(seed, k, r, 64)
        assert [int(v) for v in h] == [fill_hash_scalar(seed, k, r, i) for i in range(64)]
    g = parse("graph @t(%x: f32[4]) -> (f32[4]) {\n  %a = aten::slice(%x, 0, (rank-1)%world, (rank+5)/2)\n"
              "  return %a\n}\n")
    e = g.stmts[0].args[2][1][1]
    assert eval_int(e, 0, 4) == 3 and eval_int(g.stmts[0].args[3][1][1], 0, 4) == 2
    assert eval_int(parse_int_expr("-7/2"), 0, 1) == -4 and eval_int(parse_int_expr("-7%3"), 0, 1) == 2
    print("sf_torch self-test: OK")
    return 0


def parse_int_expr(text):
    p = Parser(text)
    return p.parse_arith()[1]


def main(argv=None):
    if argv is None and sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description="Run a symmflow .sf program in PyTorch (the reference).")
    ap.add_argument("file")
    ap.add_argument("--nproc", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--inputs", default=None)
    ap.add_argument("--save-outputs", dest="out", default=None)
    ap.add_argument("--timeout", type=int, default=120)
    a = ap.parse_args(argv)
    try:
        with open(a.file) as f:
            text = f.read()
    except OSError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    rc, err = run_program(text, a.nproc, a.seed, a.inputs, a.out, filename=a.file, timeout=a.timeout)
    if err:
        print(err, file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
