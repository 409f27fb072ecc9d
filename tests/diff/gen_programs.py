#!/usr/bin/env python3
"""Random, race-free `.sf` programs for differential testing (eager vs compiled).

    python3 tests/diff/gen_programs.py --seed S --count N --out DIR [--world-agnostic]
                                       [--check-self] [--stats]

writes DIR/prog_<S>_<i>.sf for i in 0..N-1. The same seed always gives the same
files. Every program is valid SPMD for a world of W = 1, 2, 3 or 4 ranks (peers
are `rank`/`world` expressions; a dimension that a collective splits by W is a
multiple of 12); with --world-agnostic, for every W >= 1 (nothing is split by W:
no reduce_scatter, all_to_all or per-rank chunks).

A program mixes graph inputs (f32 mostly, f64, i64, i32; 1-D and 2-D), pure
aten ops, views and views of views, in-place ops and out= forms on bases and
through views (graph inputs included), every c10d collective (functional ones
waited with c10d::wait_tensor before use), symm_mem ops, and P2P exchanges
(batch_isend_irecv rings, self-sends, isend/irecv_, receives into views) whose
handles are each waited once, with unrelated work between post and wait.

Race freedom, by construction: the generator models every tensor's storage,
offset, sizes and strides for each (W, rank) in {1..4} x {0..W-1}, and while a
P2P op (or a not yet waited collective) is in flight it never reads a tensor
overlapping a receive buffer nor writes one overlapping a send or receive
buffer. Values stay bounded (operands are clamped before ops that grow them;
exp only after a clamp to [-4, 4]; no division by anything that may be 0), so
nothing overflows and no NaN appears.

--check-self replays each program's recorded accesses through the independent
checker of sf_model.py (every handle waited exactly once, no access races an
in-flight op, send/recv pairs match in peer, tag, dtype and shape on every
world size, ...) and exits 1 naming the first violation.
"""
import argparse
import collections
import os
import random
import sys

from sf_model import (COMBOS, FLOATS, INTS, MAX_ELEMS, MAX_STMTS, CAP, WORLDS, Dim, IExpr, InFlight, K,
                      LAST, RANK, Storage, Value, can_cast, check_program, contiguous_strides,
                      elementwise_strides, fmt_scalar, max_numel, numel, overlaps, peer_shift, promote, repr_str,
                      same_layout, shape_const, shape_key, shape_text)

# ---------------------------------------------------------------------------
# the generator


class Gen:
    def __init__(self, seed, index, agnostic, coll_during_p2p=True):
        self.rng = random.Random(f"symmflow-diff:{seed}:{index}")
        self.name = f"prog_{seed}_{index}"
        self.agnostic = agnostic
        self.coll_during_p2p = coll_during_p2p  # collectives while P2P ops are in flight
        self.lines, self.values, self.inputs = [], [], []
        self.inflight = []  # InFlight, in post order
        self.n = 0
        self.sid = 0
        self.tag = 0
        self.log = []  # accesses, for the independent checker
        self.features = collections.Counter()
        self.no_waits = False  # set between the two posts of an isend/irecv_ pair
        self.sent_bound = {}  # P2P tag -> bound of the values sent

    # -- names, statements, values ------------------------------------------

    def fresh_name(self, prefix):
        self.n += 1
        return f"%{prefix}{self.n}"

    def emit(self, text):
        self.lines.append("  " + text)
        if "symm_mem::" in text or ("c10d::" in text and not any(
                k in text for k in ("wait_tensor", "isend", "irecv_", "batch_isend_irecv"))):
            self.log.append(("coll",))

    def new_storage(self, dtype, shape, input_name=None, bound=0.0):
        self.sid += 1
        return Storage(self.sid, dtype, {w: numel(shape, w) for w in WORLDS}, input_name, bound)

    def fresh(self, dtype, shape, bound, prefix="t", ready=True, input_name=None, name=None, operands=None):
        """A fresh value: row-major, or, for an elementwise result, in the layout its
        `operands` give it (values in argument order, None for a number)."""
        st = self.new_storage(dtype, shape, input_name, bound)
        lay = {}
        for (w, r) in COMBOS:
            sizes = tuple(d.val(w) for d in shape)
            strides = contiguous_strides(sizes)
            if operands:
                strides = elementwise_strides(sizes, [None if o is None else o.lay[(w, r)][1:] for o in operands])
            lay[(w, r)] = (0, sizes, tuple(strides))
        v = Value(name or self.fresh_name(prefix), dtype, shape, st, lay, ready)
        self.values.append(v)
        self.log.append(("def", v))
        return v

    def view_of(self, parent, shape, layfn, prefix="v"):
        lay = {c: layfn(c, *parent.lay[c]) for c in COMBOS}
        v = Value(self.fresh_name(prefix), parent.dtype, shape, parent.st, lay)
        self.values.append(v)
        self.log.append(("def", v))
        return v

    def alias_of(self, v, prefix="z", ready=True):
        a = Value(self.fresh_name(prefix), v.dtype, v.shape, v.st, dict(v.lay), ready)
        a._fp = v._fp
        self.values.append(a)
        self.log.append(("def", a))
        return a

    def stmt_count(self):
        return len(self.lines)

    # -- access rules ---------------------------------------------------------

    def can_read(self, v):
        return v.ready and not any(f.kind == "recv" and overlaps(f.buf, v) for f in self.inflight)

    def can_write(self, v):
        return (v.ready and v.dtype != "bool" and v.dtype == v.st.dtype
                and not any(overlaps(f.buf, v) for f in self.inflight))

    def read(self, *vs):
        for v in vs:
            assert self.can_read(v), f"{self.name}: generator read {v.name} while in flight"
            self.log.append(("read", v))

    def write(self, v, bound):
        assert self.can_write(v), f"{self.name}: generator wrote {v.name} while in flight"
        self.log.append(("write", v))
        if v.st.input_name:
            self.features["mutate graph input" + (" (view)" if not v.covers_storage() else "")] += 1
        if v.covers_storage():
            v.st.bound = bound
        else:
            v.st.bound = max(v.st.bound, bound)
            self.features["write through a view"] += 1

    def pick(self, pred, prefer_recent=True):
        cands = [v for v in self.values if pred(v)]
        if not cands:
            return None
        if not prefer_recent:
            return self.rng.choice(cands)
        weights = [1.0 + 3.0 * i / len(cands) for i in range(len(cands))]
        return self.rng.choices(cands, weights)[0]

    def numeric(self, v):
        return v.dtype in FLOATS or v.dtype in INTS

    def scalar(self, dtype, choices_f=(2.0, 0.5, -1.5, 3.0, 0.25, 1.0, -2.0), choices_i=(2, -3, 1, 7, -1)):
        return fmt_scalar(self.rng.choice(choices_i if dtype in INTS else choices_f), dtype)

    # -- bounding --------------------------------------------------------------

    def capped(self, v, cap=None):
        """v itself if |v| <= cap, else a fresh clamped copy (v must be readable)."""
        cap = CAP[v.dtype] if cap is None else cap
        if v.st.bound <= cap:
            return v
        self.read(v)
        c = self.fresh(v.dtype, v.shape, cap, operands=[v])
        lim = fmt_scalar(cap, v.dtype)
        self.emit(f"{c.name} = aten::clamp({v.name}, -{lim}, {lim})")
        return c

    def cap_in_place(self, v, cap=None):
        """Clamp the writable v in place if its storage may exceed cap; returns v's bound."""
        cap = CAP[v.dtype] if cap is None else cap
        if v.st.bound <= cap:
            return v.st.bound
        lim = fmt_scalar(cap, v.dtype)
        self.read(v)
        self.write(v, cap)
        self.emit(f"aten::clamp_({v.name}, -{lim}, {lim})")
        return cap

    # -- graph inputs ------------------------------------------------------------

    SHAPES_1D = ((12,), (24,), (48,), (96,), (144,), (36,))
    SHAPES_2D = ((12, 8), (24, 8), (24, 4), (12, 12), (48, 6), (36, 4), (8, 24), (24, 16))

    def make_inputs(self):
        for i in range(self.rng.randint(2, 5)):
            dtype = self.rng.choices(("f32", "f64", "i64", "i32"), (60, 15, 15, 10))[0]
            dims = self.rng.choice(self.SHAPES_1D if self.rng.random() < 0.45 else self.SHAPES_2D)
            shape = tuple(Dim(d) for d in dims)
            name = f"%x{i}"
            v = self.fresh(dtype, shape, 8.0 if dtype in FLOATS else 100.0,
                           input_name=name, name=name)
            self.inputs.append(v)

    # -- pure aten ops -------------------------------------------------------------

    def readable_numeric(self, v):
        return self.numeric(v) and self.can_read(v)

    def op_binary(self):
        a = self.pick(self.readable_numeric)
        if a is None:
            return False
        ops = ["add", "sub", "mul", "maximum", "minimum"] + (["div"] * 2 if a.dtype in FLOATS else [])
        op = self.rng.choice(ops)
        b = None
        if op in ("maximum", "minimum") or self.rng.random() < 0.6:
            def ok(v):
                if v is a and self.rng.random() < 0.7 or not self.readable_numeric(v):
                    return False
                if v.dtype != a.dtype and not (op in ("add", "sub", "mul") and self.rng.random() < 0.5):
                    return False
                if v.dtype in INTS and a.dtype in FLOATS and op == "div":
                    return False
                return shape_key(v.shape) == shape_key(a.shape) or (
                    len(a.shape) == 2 and len(v.shape) == 1 and v.shape[0] == a.shape[1])
            b = self.pick(ok)
            if b is None and op in ("maximum", "minimum"):
                return False
        explicit = self.rng.random() < 0.1
        if b is None:
            a = self.capped(a)
            self.read(a)
            s = self.scalar(a.dtype, (2.0, 4.0, 0.5, -8.0) if op == "div" else
                            (2.0, 0.5, -1.5, 3.0, 0.25, 1.0, -2.0))
            alpha = ""
            if op in ("add", "sub") and self.rng.random() < 0.2:
                alpha = ", alpha=2"
            bound = {"add": a.st.bound + 8 * 2, "sub": a.st.bound + 8 * 2, "mul": a.st.bound * 3,
                     "div": a.st.bound * 2}.get(op, a.st.bound)
            out = self.fresh(a.dtype, a.shape, bound, operands=[a, None])
            name = f"aten::{op}.Scalar" if explicit else f"aten::{op}"
            self.emit(f"{out.name} = {name}({a.name}, {s}{alpha})")
            self.features[f"aten::{op}(scalar)"] += 1
            return True
        if op == "div":
            b = self.capped(b)
            self.read(b)
            d = self.fresh(b.dtype, b.shape, b.st.bound, operands=[b])
            self.emit(f"{d.name} = aten::abs({b.name})")
            self.read(d)
            d1 = self.fresh(b.dtype, b.shape, b.st.bound + 1, operands=[d, None])
            self.emit(f"{d1.name} = aten::add({d.name}, {fmt_scalar(1, b.dtype)})")
            b = d1
        a, b = self.capped(a), self.capped(b)
        self.read(a, b)
        dtype = promote(a.dtype, b.dtype)
        alpha = ", alpha=2" if op in ("add", "sub") and self.rng.random() < 0.2 else ""
        bound = {"add": a.st.bound + 2 * b.st.bound, "sub": a.st.bound + 2 * b.st.bound,
                 "mul": a.st.bound * b.st.bound, "div": a.st.bound}.get(op, max(a.st.bound, b.st.bound))
        out = self.fresh(dtype, a.shape, bound, operands=[a, b])
        name = f"aten::{op}.Tensor" if explicit and op not in ("maximum", "minimum") else f"aten::{op}"
        self.emit(f"{out.name} = {name}({a.name}, {b.name}{alpha})")
        self.features[f"aten::{op}"] += 1
        if dtype != a.dtype or dtype != b.dtype:
            self.features["type promotion"] += 1
        return True

    def op_unary(self):
        a = self.pick(self.readable_numeric)
        if a is None:
            return False
        ops = ["neg", "abs", "relu"] + (["exp", "tanh", "sigmoid", "exp"] if a.dtype in FLOATS else [])
        op = self.rng.choice(ops)
        if op == "exp":
            a = self.capped(a, 4.0)
        self.read(a)
        bound = {"exp": 55.0, "tanh": 1.0, "sigmoid": 1.0}.get(op, a.st.bound)
        out = self.fresh(a.dtype, a.shape, bound, operands=[a])
        self.emit(f"{out.name} = aten::{op}({a.name})")
        self.features[f"aten::{op}"] += 1
        return True

    def op_where(self):
        a = self.pick(self.readable_numeric)
        if a is None:
            return False
        cmp_ = self.rng.choice(("gt", "lt", "ge", "le", "ne", "eq"))
        other = self.pick(lambda v: v is not a and v.dtype == a.dtype and self.can_read(v)
                          and shape_key(v.shape) == shape_key(a.shape))
        self.read(a)
        vs_other = other is not None and self.rng.random() < 0.5
        cond = self.fresh("bool", a.shape, 1, operands=[a, other if vs_other else None])
        if vs_other:
            self.read(other)
            self.emit(f"{cond.name} = aten::{cmp_}({a.name}, {other.name})")
        else:
            self.emit(f"{cond.name} = aten::{cmp_}({a.name}, {fmt_scalar(0, a.dtype)})")
        self.read(cond)
        if other is not None and self.rng.random() < 0.6:
            self.read(other)
            out = self.fresh(a.dtype, a.shape, max(a.st.bound, other.st.bound), operands=[cond, other, a])
            self.emit(f"{out.name} = aten::where({cond.name}, {other.name}, {a.name})")
        else:
            s = self.scalar(a.dtype)
            first = self.rng.random() < 0.5
            out = self.fresh(a.dtype, a.shape, max(a.st.bound, 3.0), operands=[cond, a, None] if first else [cond, None, a])
            if first:
                self.emit(f"{out.name} = aten::where({cond.name}, {a.name}, {s})")
            else:
                self.emit(f"{out.name} = aten::where({cond.name}, {s}, {a.name})")
        self.features["aten::where"] += 1
        return True

    def op_reduce(self):
        a = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) >= 1)
        if a is None:
            return False
        op = self.rng.choice(("sum", "sum", "amax", "amin") + (("mean",) if a.dtype in FLOATS else ()))
        if op in ("sum", "mean"):
            a = self.capped(a)
        self.read(a)
        if op == "sum" and self.rng.random() < 0.1:  # a 0-d result
            out = self.fresh("i64" if a.dtype in INTS else a.dtype, (), a.st.bound * max_numel(a.shape))
            self.emit(f"{out.name} = aten::sum({a.name})")
            self.features["aten::sum (0-d)"] += 1
            return True
        d = self.rng.randrange(len(a.shape))
        keep = self.rng.random() < 0.3
        shape = list(a.shape)
        n = max(a.shape[d].key())
        if keep:
            shape[d] = Dim(1)
        else:
            del shape[d]
        dtype = "i64" if (op == "sum" and a.dtype in INTS) else a.dtype
        bound = a.st.bound * n if op == "sum" else a.st.bound
        out = self.fresh(dtype, shape, bound)
        dim = d if self.rng.random() < 0.7 else d - len(a.shape)
        self.emit(f"{out.name} = aten::{op}({a.name}, [{dim}]{', true' if keep else ''})")
        self.features[f"aten::{op}"] += 1
        return True

    def op_mm(self):
        a = self.pick(lambda v: v.dtype in FLOATS and len(v.shape) == 2 and self.can_read(v))
        if a is None:
            return False
        m, k = a.shape
        b = self.pick(lambda v: v.dtype == a.dtype and len(v.shape) == 2 and v.shape[0] == k
                      and self.can_read(v) and max_numel((m, v.shape[1])) <= MAX_ELEMS)
        a = self.capped(a)
        if b is not None:
            b = self.capped(b)
            self.read(a, b)
            out = self.fresh(a.dtype, (m, b.shape[1]), max(k.key()) * a.st.bound * b.st.bound)
            self.emit(f"{out.name} = aten::mm({a.name}, {b.name})")
        else:
            # a @ a^T or a^T @ a through a transposed view
            left = self.rng.random() < 0.5
            rows = m if left else k
            if max(rows.key()) ** 2 > MAX_ELEMS:
                left, rows = (not left), (k if left else m)
                if max(rows.key()) ** 2 > MAX_ELEMS:
                    return False
            at = self.view_of(a, (k, m), lambda c, off, sz, st: (off, sz[::-1], st[::-1]))
            if self.rng.random() < 0.5:
                self.emit(f"{at.name} = aten::t({a.name})")
            else:
                self.emit(f"{at.name} = aten::transpose({a.name}, 0, 1)")
            self.read(a, at)
            inner = k if left else m
            out = self.fresh(a.dtype, (rows, rows), max(inner.key()) * a.st.bound ** 2)
            self.emit(f"{out.name} = aten::mm({a.name}, {at.name})" if left
                      else f"{out.name} = aten::mm({at.name}, {a.name})")
        self.features["aten::mm"] += 1
        return True

    def op_cat(self):
        a = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) >= 1)
        if a is None:
            return False
        d = self.rng.randrange(len(a.shape))
        parts = [a]
        for _ in range(self.rng.randint(1, 2)):
            b = self.pick(lambda v: self.readable_numeric(v) and v.dtype == a.dtype
                          and len(v.shape) == len(a.shape) and v.shape[d].p == a.shape[d].p
                          and all(v.shape[i] == a.shape[i] for i in range(len(a.shape)) if i != d))
            if b is not None:
                parts.append(b)
        stack = len(parts) > 1 and all(shape_key(p.shape) == shape_key(a.shape) for p in parts) \
            and self.rng.random() < 0.25
        if stack:
            shape = (Dim(len(parts)),) + a.shape
        else:
            shape = list(a.shape)
            shape[d] = Dim(sum(p.shape[d].c for p in parts), a.shape[d].p)
        if max_numel(shape) > MAX_ELEMS:
            return False
        self.read(*parts)
        out = self.fresh(a.dtype, shape, max(p.st.bound for p in parts))
        names = ", ".join(p.name for p in parts)
        if stack:
            self.emit(f"{out.name} = aten::stack([{names}])")
            self.features["aten::stack"] += 1
        else:
            self.emit(f"{out.name} = aten::cat([{names}]{'' if d == 0 and self.rng.random() < 0.5 else f', {d}'})")
            self.features["aten::cat"] += 1
        return True

    def op_clone(self):
        a = self.pick(self.readable_numeric)
        if a is None:
            return False
        self.read(a)
        out = self.fresh(a.dtype, a.shape, a.st.bound)
        self.emit(f"{out.name} = aten::clone({a.name})")
        self.features["aten::clone"] += 1
        return True

    def factory(self, dtype, shape, kind=None):
        """A fresh buffer from a factory op (zeros, ones, full, arange)."""
        kind = kind or self.rng.choice(("zeros", "zeros", "ones", "full"))
        positional = self.rng.random() < 0.15
        dt = f"{dtype}" if positional else f"dtype={dtype}"
        if kind == "zeros":
            v = self.fresh(dtype, shape, 0.0, prefix="b")
            self.emit(f"{v.name} = aten::zeros({shape_text(shape)}, {dt})")
        elif kind == "ones":
            v = self.fresh(dtype, shape, 1.0, prefix="b")
            self.emit(f"{v.name} = aten::ones({shape_text(shape)}, {dt})")
        else:
            s = self.scalar(dtype)
            v = self.fresh(dtype, shape, abs(float(s)), prefix="b")
            self.emit(f"{v.name} = aten::full({shape_text(shape)}, {s}, dtype={dtype})")
        self.features[f"aten::{kind}"] += 1
        return v

    def op_factory(self):
        dtype = self.rng.choice(("f32", "f32", "f64", "i64", "i32"))
        if self.rng.random() < 0.3:
            n = self.rng.choice((12, 24, 48))
            v = self.fresh(dtype, (Dim(n),), float(n), prefix="b")
            self.emit(f"{v.name} = aten::arange({n}, dtype={dtype})")
            self.features["aten::arange"] += 1
            return True
        dims = self.rng.choice(self.SHAPES_1D + self.SHAPES_2D)
        self.factory(dtype, tuple(Dim(d) for d in dims))
        return True

    # -- views ------------------------------------------------------------------------

    def op_view(self):
        a = self.pick(lambda v: v.ready and v.dtype != "bool" and self.can_read(v))
        if a is None:
            return False
        if not shape_const(a.shape) and self.rng.random() < 0.7 and self.fix_world_dims(a):
            return True
        nd = len(a.shape)
        choices = ["slice", "select", "narrow", "unsqueeze", "alias"]
        if nd == 2:
            choices += ["transpose", "transpose", "t", "permute"]
        if nd >= 1 and a.contiguous() and shape_const(a.shape):
            choices += ["view", "view", "flatten"]
        if nd >= 1 and a.rank_invariant() and shape_const(a.shape):
            choices += ["as_strided", "as_strided"]
        if any(d.c == 1 and d.p == 0 for d in a.shape):
            choices += ["squeeze"] * 3
        if not self.agnostic and any(d.p == 0 and d.c % 12 == 0 for d in a.shape):
            choices += ["chunk", "chunk"]
        kind = self.rng.choice(choices)
        return getattr(self, "view_" + kind)(a)

    def const_dim(self, a, pred=lambda d: True):
        dims = [i for i, d in enumerate(a.shape) if d.p == 0 and pred(d)]
        return self.rng.choice(dims) if dims else None

    def view_slice(self, a, narrow=False):
        d = self.const_dim(a, lambda d: d.c >= 2)
        if d is None:
            return False
        n = a.shape[d].c
        start = self.rng.randrange(n - 1)
        end = self.rng.randint(start + 1, n)
        step = 2 if (not narrow and end - start >= 4 and self.rng.random() < 0.2) else 1
        length = (end - start + step - 1) // step
        shape = list(a.shape)
        shape[d] = Dim(length)

        def lay(c, off, sz, st):
            sz, st = list(sz), list(st)
            off += start * st[d]
            sz[d], st[d] = length, st[d] * step
            return off, tuple(sz), tuple(st)

        v = self.view_of(a, shape, lay)
        if narrow:
            self.emit(f"{v.name} = aten::narrow({a.name}, {d}, {start}, {end - start})")
        elif step > 1:
            self.emit(f"{v.name} = aten::slice({a.name}, {d}, {start}, {end}, {step})")
        else:
            end_t = str(end) if end < n or self.rng.random() < 0.5 else "None"
            self.emit(f"{v.name} = aten::slice({a.name}, {d}, {start}, {end_t})")
        self.features["view " + ("narrow" if narrow else "slice")] += 1
        return True

    def view_narrow(self, a):
        return self.view_slice(a, narrow=True)

    def view_chunk(self, a):
        """A per-rank chunk: narrow(a, d, rank*(n/world), n/world)."""
        d = self.const_dim(a, lambda d: d.c % 12 == 0)
        if d is None:
            return False
        n = a.shape[d].c
        who = self.rng.choice((RANK, peer_shift(1)))
        shape = list(a.shape)
        shape[d] = Dim(n, -1)

        def lay(c, off, sz, st):
            w, r = c
            sz, st = list(sz), list(st)
            off += who(w, r) * (n // w) * st[d]
            sz[d] = n // w
            return off, tuple(sz), tuple(st)

        v = self.view_of(a, shape, lay)
        wt = who.text if who is RANK else f"({who.text})"
        if self.rng.random() < 0.6:
            self.emit(f"{v.name} = aten::narrow({a.name}, {d}, {wt}*({n}/world), {n}/world)")
        else:
            nxt = "(rank+1)" if who is RANK else f"({who.text}+1)"
            self.emit(f"{v.name} = aten::slice({a.name}, {d}, {wt}*({n}/world), {nxt}*({n}/world))")
        self.features["view per-rank chunk"] += 1
        return True

    def view_select(self, a):
        d = self.const_dim(a)
        if d is None:
            return False
        n = a.shape[d].c
        r = self.rng.random()
        if r < 0.25 and n >= 4:
            idx = IExpr(f"rank%{n}", lambda w, rr: rr % n) if self.agnostic else RANK
        elif r < 0.4:
            idx = IExpr("-1", lambda w, rr: n - 1)
        else:
            i = self.rng.randrange(n)
            idx = IExpr(str(i), lambda w, rr: i)
        shape = a.shape[:d] + a.shape[d + 1:]

        def lay(c, off, sz, st):
            return off + idx(*c) * st[d], sz[:d] + sz[d + 1:], st[:d] + st[d + 1:]

        v = self.view_of(a, shape, lay)
        self.emit(f"{v.name} = aten::select({a.name}, {d}, {idx.text})")
        self.features["view select"] += 1
        return True

    def view_transpose(self, a):
        v = self.view_of(a, a.shape[::-1], lambda c, off, sz, st: (off, sz[::-1], st[::-1]))
        dims = self.rng.choice(("0, 1", "1, 0", "-2, -1", "0, -1"))
        self.emit(f"{v.name} = aten::transpose({a.name}, {dims})")
        self.features["view transpose"] += 1
        return True

    def view_t(self, a):
        v = self.view_of(a, a.shape[::-1], lambda c, off, sz, st: (off, sz[::-1], st[::-1]))
        self.emit(f"{v.name} = aten::t({a.name})")
        self.features["view t"] += 1
        return True

    def view_permute(self, a):
        v = self.view_of(a, a.shape[::-1], lambda c, off, sz, st: (off, sz[::-1], st[::-1]))
        self.emit(f"{v.name} = aten::permute({a.name}, [1, 0])")
        self.features["view permute"] += 1
        return True

    def view_alias(self, a):
        v = self.view_of(a, a.shape, lambda c, off, sz, st: (off, sz, st))
        self.emit(f"{v.name} = aten::alias({a.name})")
        self.features["view alias"] += 1
        return True

    def view_unsqueeze(self, a):
        d = self.rng.randint(0, len(a.shape))
        shape = a.shape[:d] + (Dim(1),) + a.shape[d:]

        def lay(c, off, sz, st):
            s = sz[d] * st[d] if d < len(sz) else 1
            return off, sz[:d] + (1,) + sz[d:], st[:d] + (s,) + st[d:]

        v = self.view_of(a, shape, lay)
        self.emit(f"{v.name} = aten::unsqueeze({a.name}, {d})")
        self.features["view unsqueeze"] += 1
        return True

    def view_squeeze(self, a):
        dims = [i for i, d in enumerate(a.shape) if d.c == 1 and d.p == 0]
        d = self.rng.choice(dims)
        shape = a.shape[:d] + a.shape[d + 1:]
        v = self.view_of(a, shape, lambda c, off, sz, st: (off, sz[:d] + sz[d + 1:], st[:d] + st[d + 1:]))
        self.emit(f"{v.name} = aten::squeeze({a.name}, {d})")
        self.features["view squeeze"] += 1
        return True

    def view_view(self, a):
        n = max_numel(a.shape)
        if n <= 1:
            return False
        divs = [k for k in range(2, n) if n % k == 0 and k <= 48 and n // k <= 96]
        if len(a.shape) == 2 and (not divs or self.rng.random() < 0.4):
            new, text = (n,), "[-1]" if self.rng.random() < 0.5 else f"[{n}]"
        elif divs:
            k = self.rng.choice(divs)
            new, text = (k, n // k), (f"[{k}, -1]" if self.rng.random() < 0.3 else f"[{k}, {n // k}]")
        else:
            return False
        shape = tuple(Dim(x) for x in new)
        v = self.view_of(a, shape, lambda c, off, sz, st: (off, new, contiguous_strides(new)))
        self.emit(f"{v.name} = aten::view({a.name}, {text})")
        self.features["view view"] += 1
        return True

    def view_flatten(self, a):
        n = max_numel(a.shape)
        v = self.view_of(a, (Dim(n),), lambda c, off, sz, st: (off, (n,), (1,)))
        self.emit(f"{v.name} = aten::flatten({a.name})")
        self.features["view flatten"] += 1
        return True

    def view_as_strided(self, a):
        """A non-self-overlapping strided window anywhere in a's storage."""
        total = a.st.numels[1]
        off0 = a.lay[(1, 0)][0]
        for _ in range(8):
            if self.rng.random() < 0.5:
                b = self.rng.randint(2, 8)
                s1 = self.rng.choice((1, 1, 2))
                s0 = b * s1 + self.rng.choice((0, 0, 1, 3))
                rows = self.rng.randint(2, 6)
                off = self.rng.choice((off0, self.rng.randrange(max(1, total // 2))))
                if off + (rows - 1) * s0 + (b - 1) * s1 < total:
                    sizes, strides = (rows, b), (s0, s1)
                    break
            else:
                n = self.rng.randint(2, 16)
                s = self.rng.choice((1, 2, 3))
                off = self.rng.choice((off0, self.rng.randrange(max(1, total // 2))))
                if off + (n - 1) * s < total:
                    sizes, strides = (n,), (s,)
                    break
        else:
            return False
        shape = tuple(Dim(x) for x in sizes)
        v = self.view_of(a, shape, lambda c, o, sz, st: (off, sizes, strides))
        self.emit(f"{v.name} = aten::as_strided({a.name}, {list(sizes)}, {list(strides)}, {off})")
        self.features["view as_strided"] += 1
        return True

    def fix_world_dims(self, a):
        """Bring a value with a W-dependent dim 0 back to a fixed shape."""
        d0 = a.shape[0] if a.shape else None
        if d0 is None or d0.p == 0:
            return False
        rest = a.shape[1:]
        if d0.p == 1:  # [c*world, ...]: a peer's block, or a fold over the blocks
            c = d0.c
            if self.rng.random() < 0.5 or not a.contiguous():
                who = self.rng.choice((RANK, peer_shift(1), LAST))
                inner = 1
                for d in rest:
                    inner *= d.c

                def lay(cb, off, sz, st):
                    w, r = cb
                    return off + who(w, r) * c * st[0], (c,) + sz[1:], st

                v = self.view_of(a, (Dim(c),) + rest, lay)
                self.emit(f"{v.name} = aten::narrow({a.name}, 0, ({who.text})*{c}, {c})")
                self.features["view narrow by rank"] += 1
                return True
            shape = (Dim(1, 1), Dim(c)) + rest

            def lay(cb, off, sz, st):
                new = (cb[0], c) + sz[1:]
                return off, new, contiguous_strides(new)

            v = self.view_of(a, shape, lay)
            self.emit(f"{v.name} = aten::view({a.name}, [world, {c}{''.join(', ' + d.text() for d in rest)}])")
            self.features["view by world"] += 1
            if self.rng.random() < 0.3:
                idx = self.rng.choice((RANK, LAST, K(0)))
                s = self.view_of(v, (Dim(c),) + rest,
                                 lambda cb, off, sz, st: (off + idx(*cb) * st[0], sz[1:], st[1:]))
                self.emit(f"{s.name} = aten::select({v.name}, 0, {idx.text})")
                return True
            op = self.rng.choice(("sum", "amax", "amin"))
            src = self.capped(v) if op == "sum" else v
            self.read(src)
            dtype = "i64" if (op == "sum" and a.dtype in INTS) else a.dtype
            out = self.fresh(dtype, (Dim(c),) + rest, src.st.bound * (4 if op == "sum" else 1))
            self.emit(f"{out.name} = aten::{op}({src.name}, [0])")
            return True
        # [c/world, ...]: copy into this rank's chunk of a full-size buffer
        c = d0.c
        buf = self.pick(lambda v: v.dtype == a.dtype and len(v.shape) == len(a.shape)
                        and v.shape[0] == Dim(c) and v.shape[1:] == a.shape[1:]
                        and self.can_write(v) and not overlaps(v, a))
        if buf is None:
            buf = self.factory(a.dtype, (Dim(c),) + rest, "zeros")
        chunk = self.view_of(buf, a.shape, lambda cb, off, sz, st: (
            off + cb[1] * (c // cb[0]) * st[0], (c // cb[0],) + sz[1:], st))
        self.emit(f"{chunk.name} = aten::narrow({buf.name}, 0, rank*({c}/world), {c}/world)")
        self.read(a)
        self.write(chunk, max(chunk.st.bound, a.st.bound))
        self.emit(f"aten::copy_({chunk.name}, {a.name})")
        self.features["copy_ into per-rank chunk"] += 1
        return True

    # -- in-place and out= ------------------------------------------------------------

    def pick_target(self, pred=lambda v: True):
        """A writable tensor, views and graph inputs preferred."""
        def ok(v):
            return self.can_write(v) and pred(v)
        if self.rng.random() < 0.6:
            t = self.pick(lambda v: ok(v) and (not v.covers_storage() or v.st.input_name))
            if t is not None:
                return t
        return self.pick(ok)

    def other_for(self, t, same_dtype=False, exclude=()):
        """A readable operand of t's shape (or broadcastable), disjoint from t."""
        def ok(v):
            if not self.readable_numeric(v) or v in exclude:
                return False
            if same_dtype and v.dtype != t.dtype:
                return False
            if not same_dtype and not can_cast(v.dtype, t.dtype):
                return False
            if overlaps(v, t) and not same_layout(v, t):
                return False
            if any(overlaps(v, e) and not same_layout(v, e) for e in exclude):
                return False
            return shape_key(v.shape) == shape_key(t.shape) or (
                len(t.shape) == 2 and len(v.shape) == 1 and v.shape[0] == t.shape[1])
        return self.pick(ok)

    def op_inplace(self):
        t = self.pick_target(self.numeric)
        if t is None:
            return False
        fl = t.dtype in FLOATS
        op = self.rng.choice(("add_", "add_", "sub_", "mul_", "copy_", "copy_", "fill_", "zero_",
                              "clamp_", "relu_", "neg_", "abs_") + (("div_", "exp_") if fl else ()))
        res = ""
        if self.rng.random() < 0.4:
            res = self.fresh_name("z")
        if op in ("add_", "sub_", "mul_", "copy_", "div_"):
            o = self.other_for(t, same_dtype=(op == "div_"))
            if o is not None and op == "copy_" and o.dtype != t.dtype:
                o = self.capped(o, 1e4)
            if op == "mul_":
                tb = self.cap_in_place(t)
                if o is not None:
                    o = self.capped(o)
            elif op in ("add_", "sub_"):
                tb = self.cap_in_place(t)
                if o is not None:
                    o = self.capped(o)
            else:
                tb = t.st.bound
            if o is None and op == "copy_":
                return False
            if o is not None and op == "div_":
                o = self.capped(o)
                self.read(o)
                d = self.fresh(o.dtype, o.shape, o.st.bound, operands=[o])
                self.emit(f"{d.name} = aten::abs({o.name})")
                self.read(d)
                d1 = self.fresh(o.dtype, o.shape, o.st.bound + 1, operands=[d, None])
                self.emit(f"{d1.name} = aten::add({d.name}, 1.0)")
                o = d1
            if o is not None:
                self.read(o)
                arg = o.name
                ob = o.st.bound
            else:
                arg = self.scalar(t.dtype, (2.0, 4.0, 0.5) if op == "div_" else (2.0, 0.5, -1.5, 3.0, 0.25))
                ob = abs(float(arg))
            alpha = ", alpha=2" if op in ("add_", "sub_") and self.rng.random() < 0.2 else ""
            bound = {"add_": tb + 2 * ob, "sub_": tb + 2 * ob, "mul_": tb * ob,
                     "copy_": ob, "div_": tb * 2}[op]
            self.read(t)
            self.write(t, bound)
            self.emit(f"{res + ' = ' if res else ''}aten::{op}({t.name}, {arg}{alpha})")
            self.features[f"aten::{op}" + (" (tensor)" if o is not None else "")] += 1
        elif op == "fill_":
            s = self.scalar(t.dtype)
            self.write(t, abs(float(s)))
            self.emit(f"{res + ' = ' if res else ''}aten::fill_({t.name}, {s})")
            self.features["aten::fill_"] += 1
        elif op == "zero_":
            self.write(t, 0.0)
            self.emit(f"{res + ' = ' if res else ''}aten::zero_({t.name})")
            self.features["aten::zero_"] += 1
        elif op == "clamp_":
            lo, hi = (-3, 5) if not fl else (-2.5, 1.5)
            upper_only = self.rng.random() < 0.2
            self.read(t)
            # with an upper bound only, |x| keeps its old bound
            self.write(t, t.st.bound if upper_only else max(abs(lo), hi))
            lo_t = "None" if upper_only else fmt_scalar(lo, t.dtype)
            self.emit(f"{res + ' = ' if res else ''}aten::clamp_({t.name}, {lo_t}, {fmt_scalar(hi, t.dtype)})")
            self.features["aten::clamp_"] += 1
        elif op == "exp_":
            self.cap_in_place(t, 4.0)
            self.read(t)
            self.write(t, 55.0)
            self.emit(f"{res + ' = ' if res else ''}aten::exp_({t.name})")
            self.features["aten::exp_"] += 1
        else:  # relu_, neg_, abs_
            self.read(t)
            self.write(t, t.st.bound)
            self.emit(f"{res + ' = ' if res else ''}aten::{op}({t.name})")
            self.features[f"aten::{op}"] += 1
        if res:
            z = Value(res, t.dtype, t.shape, t.st, dict(t.lay))
            z._fp = t._fp
            self.values.append(z)
            self.log.append(("def", z))
            self.features["use in-place result alias"] += 1
        return True

    def op_out(self):
        o = self.pick_target(self.numeric)
        if o is None:
            return False
        fl = o.dtype in FLOATS
        unary = self.rng.random() < 0.35
        if unary:
            op = self.rng.choice(("neg", "abs", "relu") + (("exp", "tanh") if fl else ()))
            a = self.pick(lambda v: self.readable_numeric(v) and v.dtype == o.dtype
                          and shape_key(v.shape) == shape_key(o.shape) and not overlaps(v, o))
            if a is None:
                return False
            a = self.capped(a, 4.0 if op == "exp" else None)
            self.read(a)
            bound = {"exp": 55.0, "tanh": 1.0}.get(op, a.st.bound)
            args = a.name
        else:
            op = self.rng.choice(("add", "sub", "mul", "maximum", "minimum") + (("div",) if fl else ()))
            a = self.pick(lambda v: self.readable_numeric(v) and v.dtype == o.dtype
                          and shape_key(v.shape) == shape_key(o.shape) and not overlaps(v, o))
            if a is None:
                return False
            b = self.pick(lambda v: self.readable_numeric(v) and v.dtype == o.dtype and not overlaps(v, o)
                          and (shape_key(v.shape) == shape_key(o.shape) or
                               (len(o.shape) == 2 and len(v.shape) == 1 and v.shape[0] == o.shape[1])))
            if b is None:
                return False
            a, b = self.capped(a), self.capped(b)
            if op == "div":
                self.read(b)
                d = self.fresh(b.dtype, b.shape, b.st.bound, operands=[b])
                self.emit(f"{d.name} = aten::abs({b.name})")
                self.read(d)
                b = self.fresh(b.dtype, b.shape, b.st.bound + 1, operands=[d, None])
                self.emit(f"{b.name} = aten::add({d.name}, 1.0)")
            self.read(a, b)
            bound = {"add": a.st.bound + b.st.bound, "sub": a.st.bound + b.st.bound,
                     "mul": a.st.bound * b.st.bound, "div": a.st.bound}.get(op, max(a.st.bound, b.st.bound))
            args = f"{a.name}, {b.name}"
        self.write(o, bound)
        res = self.fresh_name("z") if self.rng.random() < 0.5 else ""
        self.emit(f"{res + ' = ' if res else ''}aten::{op}.out({args}, out={o.name})")
        self.features["out= form"] += 1
        if res:
            z = Value(res, o.dtype, o.shape, o.st, dict(o.lay))
            z._fp = o._fp
            self.values.append(z)
            self.log.append(("def", z))
        return True

    # -- collectives -------------------------------------------------------------------

    def reduce_op(self, dtype):
        ops = ["sum", "sum", "sum", "max", "min", "product"] + (["avg"] if dtype in FLOATS else [])
        return self.rng.choice(ops)

    def reduced_bound(self, op, b):
        return {"sum": 4 * b, "avg": b, "max": b, "min": b, "product": b ** 4}[op]

    def op_collective(self):
        kinds = ["all_reduce", "all_reduce_", "all_reduce_", "coalesced_", "coalesced",
                 "all_gather", "all_gather_out", "broadcast_", "broadcast"]
        if not self.agnostic:
            kinds += ["reduce_scatter", "reduce_scatter", "all_to_all", "all_to_all"]
        else:
            kinds += ["reduce_scatter"]  # only of a [c*world] tensor
        kind = self.rng.choice(kinds)
        return getattr(self, "coll_" + kind)()

    def pending_out(self, x, out_dtype, out_shape, bound):
        """A functional collective's result: usable after c10d::wait_tensor."""
        out = self.fresh(out_dtype, out_shape, bound, prefix="c", ready=False)
        self.inflight.append(InFlight(out, "send", x))  # x must not be written before the wait
        self.log.append(("post", out, "send", x))
        self.log.append(("post", out, "recv", out))  # nor the result read
        return out

    def coll_all_reduce(self):
        x = self.pick(self.readable_numeric)
        if x is None:
            return False
        op = self.reduce_op(x.dtype)
        x = self.capped(x, 100 if op == "product" else None)
        self.read(x)
        out = self.pending_out(x, x.dtype, x.shape, self.reduced_bound(op, x.st.bound))
        self.emit(f'{out.name} = c10d::all_reduce({x.name}, "{op}", "world")')
        self.features["c10d::all_reduce"] += 1
        return True

    def inplace_collective(self, x, text, bound, feature):
        """Emit an in-place collective on x; maybe wait for it later."""
        self.read(x)
        self.write(x, bound)
        waited = self.rng.random() < 0.5
        res = self.fresh_name("c") if (waited or self.rng.random() < 0.5) else ""
        self.emit(f"{res + ' = ' if res else ''}{text}")
        self.features[feature] += 1
        if res:
            z = Value(res, x.dtype, x.shape, x.st, dict(x.lay), ready=not waited)
            z._fp = x._fp
            self.values.append(z)
            self.log.append(("def", z))
            if waited:
                self.inflight.append(InFlight(z, "recv", z))
                self.log.append(("post", z, "recv", z))
                self.features[feature + " (waited)"] += 1
        return True

    def coll_all_reduce_(self):
        x = self.pick_target(self.numeric)
        if x is None:
            return False
        op = self.reduce_op(x.dtype)
        b = self.cap_in_place(x, 100 if op == "product" else None)
        return self.inplace_collective(x, f'c10d::all_reduce_({x.name}, "{op}", "world")',
                                       self.reduced_bound(op, b),
                                       "c10d::all_reduce_" + (" (view)" if not x.covers_storage() else ""))

    def coalesced_list(self, writable):
        first = self.pick_target(self.numeric) if writable else self.pick(self.readable_numeric)
        if first is None:
            return None
        xs = [first]
        for _ in range(self.rng.randint(1, 2)):
            ok = self.can_write if writable else self.can_read
            # a view of another tensor when we can, to cover list aliases of views
            v = self.pick(lambda v: ok(v) and v.dtype == first.dtype and v not in xs
                          and not any(overlaps(v, u) for u in xs)
                          and (not v.covers_storage() or self.rng.random() < 0.5))
            if v is not None:
                xs.append(v)
        return xs if len(xs) >= 2 else None

    def coll_coalesced_(self):
        xs = self.coalesced_list(True)
        if xs is None:
            return False
        op = self.rng.choice(("sum", "sum", "max", "min"))
        bounds = [self.cap_in_place(x) for x in xs]
        for x, b in zip(xs, bounds):
            self.read(x)
            self.write(x, self.reduced_bound(op, b))
        waited = self.rng.random() < 0.4
        names = [self.fresh_name("c") for _ in xs] if (waited or self.rng.random() < 0.5) else []
        lhs = ", ".join(names) + " = " if names else ""
        self.emit(f'{lhs}c10d::all_reduce_coalesced_([{", ".join(x.name for x in xs)}], "{op}", "world")')
        self.features["c10d::all_reduce_coalesced_"] += 1
        if any(not x.covers_storage() for x in xs):
            self.features["c10d::all_reduce_coalesced_ (with a view)"] += 1
        for n, x in zip(names, xs):
            z = Value(n, x.dtype, x.shape, x.st, dict(x.lay), ready=not waited)
            z._fp = x._fp
            self.values.append(z)
            self.log.append(("def", z))
            if waited:
                self.inflight.append(InFlight(z, "recv", z))
                self.log.append(("post", z, "recv", z))
        return True

    def coll_coalesced(self):
        xs = self.coalesced_list(False)
        if xs is None:
            return False
        op = self.rng.choice(("sum", "max", "min", "avg" if xs[0].dtype in FLOATS else "sum"))
        xs = [self.capped(x) for x in xs]
        self.read(*xs)
        outs = [self.pending_out(x, x.dtype, x.shape, self.reduced_bound(op, x.st.bound)) for x in xs]
        self.emit(f'{", ".join(o.name for o in outs)} = c10d::all_reduce_coalesced('
                  f'[{", ".join(x.name for x in xs)}], "{op}", "world")')
        self.features["c10d::all_reduce_coalesced"] += 1
        return True

    def coll_all_gather(self):
        x = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) >= 1 and v.shape[0].p <= 0
                      and max_numel(v.shape) * (4 if v.shape[0].p == 0 else 1) <= MAX_ELEMS)
        if x is None:
            return False
        self.read(x)
        shape = (Dim(x.shape[0].c, x.shape[0].p + 1),) + x.shape[1:]
        out = self.pending_out(x, x.dtype, shape, x.st.bound)
        self.emit(f'{out.name} = c10d::all_gather_into_tensor({x.name}, world, "world")')
        self.features["c10d::all_gather_into_tensor"] += 1
        return True

    def coll_all_gather_out(self):
        x = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) >= 1 and v.shape[0].p == -1)
        if x is None:
            if self.agnostic:
                return False
            src = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) >= 1
                            and v.shape[0].p == 0 and v.shape[0].c % 12 == 0)
            if src is None or not self.view_chunk_dim0(src):
                return False
            x = self.values[-1]
        shape = (Dim(x.shape[0].c),) + x.shape[1:]
        o = self.pick(lambda v: self.can_write(v) and v.dtype == x.dtype
                      and shape_key(v.shape) == shape_key(shape) and not overlaps(v, x))
        if o is None:
            if len(shape) == 1 and self.rng.random() < 0.5:  # a row of a 2-D buffer
                rows = self.factory(x.dtype, (Dim(2),) + shape, "zeros")
                o = self.view_of(rows, shape, lambda c, off, sz, st: (off + st[0], sz[1:], st[1:]))
                self.emit(f"{o.name} = aten::select({rows.name}, 0, 1)")
            else:
                o = self.factory(x.dtype, shape, "zeros")
        self.read(x)
        self.write(o, x.st.bound)
        res = self.fresh_name("c")
        self.emit(f'{res} = c10d::all_gather_into_tensor_out({x.name}, world, "world", out={o.name})')
        z = Value(res, o.dtype, o.shape, o.st, dict(o.lay), ready=False)
        z._fp = o._fp
        self.values.append(z)
        self.log.append(("def", z))
        self.inflight.append(InFlight(z, "recv", z))
        self.log.append(("post", z, "recv", z))
        self.inflight.append(InFlight(z, "send", x))
        self.log.append(("post", z, "send", x))
        self.features["c10d::all_gather_into_tensor_out"] += 1
        return True

    def view_chunk_dim0(self, a):
        n = a.shape[0].c
        shape = (Dim(n, -1),) + a.shape[1:]
        v = self.view_of(a, shape, lambda c, off, sz, st: (
            off + c[1] * (n // c[0]) * st[0], (n // c[0],) + sz[1:], st))
        self.emit(f"{v.name} = aten::narrow({a.name}, 0, rank*({n}/world), {n}/world)")
        self.features["view per-rank chunk"] += 1
        return True

    def splittable(self, v):
        d = v.shape[0] if v.shape else None
        if d is None:
            return False
        return d.p == 1 or (not self.agnostic and d.p == 0 and d.c % 12 == 0)

    def coll_reduce_scatter(self):
        x = self.pick(lambda v: self.readable_numeric(v) and self.splittable(v))
        if x is None:
            return False
        op = self.reduce_op(x.dtype)
        x = self.capped(x, 100 if op == "product" else None)
        self.read(x)
        shape = (Dim(x.shape[0].c, x.shape[0].p - 1),) + x.shape[1:]
        out = self.pending_out(x, x.dtype, shape, self.reduced_bound(op, x.st.bound))
        self.emit(f'{out.name} = c10d::reduce_scatter_tensor({x.name}, "{op}", world, "world")')
        self.features["c10d::reduce_scatter_tensor"] += 1
        return True

    def coll_all_to_all(self):
        x = self.pick(lambda v: self.readable_numeric(v) and self.splittable(v))
        if x is None:
            return False
        self.read(x)
        out = self.pending_out(x, x.dtype, x.shape, x.st.bound)
        self.emit(f'{out.name} = c10d::all_to_all_single({x.name}, [], [], "world")')
        self.features["c10d::all_to_all_single"] += 1
        return True

    def coll_broadcast_(self):
        x = self.pick_target(self.numeric)
        if x is None:
            return False
        src = self.rng.choice(("0", "world-1"))
        return self.inplace_collective(x, f'c10d::broadcast_({x.name}, {src}, "world")', x.st.bound,
                                       "c10d::broadcast_" + (" (view)" if not x.covers_storage() else ""))

    def coll_broadcast(self):
        x = self.pick(self.readable_numeric)
        if x is None:
            return False
        self.read(x)
        out = self.pending_out(x, x.dtype, x.shape, x.st.bound)
        self.emit(f'{out.name} = c10d::broadcast({x.name}, {self.rng.choice(("0", "world-1"))}, "world")')
        self.features["c10d::broadcast"] += 1
        return True

    # -- symm_mem -------------------------------------------------------------------------

    def op_symm(self):
        kind = self.rng.choice(("multimem", "multimem", "one_shot", "one_shot_out", "two_shot",
                                "two_shot", "tile_reduce", "all_gather_out"))
        if kind == "all_gather_out" and self.agnostic:
            kind = "one_shot"
        op = None
        if kind in ("multimem", "two_shot"):
            x = self.pick_target(lambda v: self.numeric(v) and v.contiguous())
            if x is None:
                return False
            op = self.reduce_op(x.dtype)
            b = self.cap_in_place(x, 100 if op == "product" else None)
            self.read(x)
            self.write(x, self.reduced_bound(op, b))
            name = "multimem_all_reduce_" if kind == "multimem" else "two_shot_all_reduce_"
            res = self.fresh_name("r") if (kind == "multimem" or self.rng.random() < 0.5) else ""
            self.emit(f'{res + " = " if res else ""}symm_mem::{name}({x.name}, "{op}", "world")')
            self.features[f"symm_mem::{name}"] += 1
            if res:
                z = Value(res, x.dtype, x.shape, x.st, dict(x.lay))
                z._fp = x._fp
                self.values.append(z)
                self.log.append(("def", z))
            return True
        if kind in ("one_shot", "one_shot_out"):
            x = self.pick(lambda v: self.readable_numeric(v) and v.contiguous())
            if x is None:
                return False
            op = self.reduce_op(x.dtype)
            x = self.capped(x, 100 if op == "product" else None)
            bound = self.reduced_bound(op, x.st.bound)
            if kind == "one_shot":
                self.read(x)
                out = self.fresh(x.dtype, x.shape, bound, prefix="r")
                self.emit(f'{out.name} = symm_mem::one_shot_all_reduce({x.name}, "{op}", "world")')
                self.features["symm_mem::one_shot_all_reduce"] += 1
                return True
            o = self.pick(lambda v: self.can_write(v) and v.dtype == x.dtype
                          and shape_key(v.shape) == shape_key(x.shape) and not overlaps(v, x))
            if o is None:
                o = self.factory(x.dtype, x.shape, "zeros")
            self.read(x)
            self.write(o, bound)
            res = self.fresh_name("r") if self.rng.random() < 0.5 else ""
            self.emit(f'{res + " = " if res else ""}symm_mem::one_shot_all_reduce_out({x.name}, "{op}", "world", {o.name})')
            self.features["symm_mem::one_shot_all_reduce_out"] += 1
            if res:
                z = Value(res, o.dtype, o.shape, o.st, dict(o.lay))
                z._fp = o._fp
                self.values.append(z)
                self.log.append(("def", z))
            return True
        if kind == "all_gather_out":
            x = self.pick(lambda v: self.readable_numeric(v) and v.contiguous()
                          and len(v.shape) >= 1 and v.shape[0].p == -1)
            if x is None:
                return False
            shape = (Dim(x.shape[0].c),) + x.shape[1:]
            o = self.pick(lambda v: self.can_write(v) and v.dtype == x.dtype
                          and shape_key(v.shape) == shape_key(shape) and not overlaps(v, x))
            if o is None:
                o = self.factory(x.dtype, shape, "zeros")
            self.read(x)
            self.write(o, x.st.bound)
            self.emit(f'symm_mem::all_gather_out({x.name}, "world", {o.name})')
            self.features["symm_mem::all_gather_out"] += 1
            return True
        # tile_reduce: a (possibly strided) 2-D tile onto a root's out tile
        x = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) == 2 and shape_const(v.shape))
        if x is None:
            return False
        op = self.rng.choice(("sum", "sum", "max", "min"))
        x = self.capped(x)
        o = self.pick(lambda v: self.can_write(v) and v.dtype == x.dtype
                      and shape_key(v.shape) == shape_key(x.shape) and not overlaps(v, x))
        if o is None:
            o = self.factory(x.dtype, x.shape, "zeros")
        root = self.rng.choice(("0", "world-1"))
        self.read(x)
        self.write(o, max(o.st.bound, self.reduced_bound(op, x.st.bound)))
        red = f', "{op}"' if (op != "sum" or self.rng.random() < 0.5) else ""
        self.emit(f'symm_mem::tile_reduce({x.name}, {o.name}, {root}, "world"{red})')
        self.features["symm_mem::tile_reduce"] += 1
        return True

    # -- point-to-point -------------------------------------------------------------------

    def recv_target(self, s, exclude):
        """A receive buffer of s's shape and dtype, disjoint from s and from exclude."""
        def ok(v):
            return (self.can_write(v) and v.dtype == s.dtype and shape_key(v.shape) == shape_key(s.shape)
                    and not overlaps(v, s) and not any(overlaps(v, e) for e in exclude))
        r = self.pick(ok) if self.rng.random() < 0.5 else None
        if r is not None:
            return r
        shape = s.shape
        how = self.rng.random()
        if len(shape) == 1 and how < 0.4:  # a row of a 2-D buffer
            rows = self.rng.randint(2, 3)
            buf = self.factory(s.dtype, (Dim(rows),) + shape, "zeros")
            i = self.rng.randrange(rows)
            r = self.view_of(buf, shape, lambda c, off, sz, st: (off + i * st[0], sz[1:], st[1:]))
            self.emit(f"{r.name} = aten::select({buf.name}, 0, {i})")
            self.features["recv into a view (select)"] += 1
        elif len(shape) == 2 and shape_const(shape) and how < 0.35:  # transposed buffer
            buf = self.factory(s.dtype, shape[::-1], "zeros")
            r = self.view_of(buf, shape, lambda c, off, sz, st: (off, sz[::-1], st[::-1]))
            self.emit(f"{r.name} = aten::transpose({buf.name}, 0, 1)")
            self.features["recv into a view (transpose)"] += 1
        elif len(shape) == 2 and shape_const(shape) and how < 0.7:  # columns of a wider buffer
            extra = self.rng.choice((2, 4))
            buf = self.factory(s.dtype, (shape[0], Dim(shape[1].c + extra)), "zeros")
            lo = self.rng.randint(0, extra)
            r = self.view_of(buf, shape, lambda c, off, sz, st: (off + lo * st[1], (sz[0], sz[1] - extra), st))
            self.emit(f"{r.name} = aten::slice({buf.name}, 1, {lo}, {lo + shape[1].c})")
            self.features["recv into a view (column slice)"] += 1
        elif len(shape) >= 1 and shape_const(shape) and how < 0.85:  # rows of a taller buffer
            buf = self.factory(s.dtype, (Dim(shape[0].c + 2),) + shape[1:], "zeros")
            r = self.view_of(buf, shape, lambda c, off, sz, st: (off + st[0], (sz[0] - 2,) + sz[1:], st))
            self.emit(f"{r.name} = aten::slice({buf.name}, 0, 1, {shape[0].c + 1})")
            self.features["recv into a view (row slice)"] += 1
        else:
            r = self.factory(s.dtype, shape, self.rng.choice(("zeros", "full")))
        if any(overlaps(r, e) for e in exclude):  # cannot happen: fresh storage
            return None
        return r

    def op_p2p(self):
        separate = self.rng.random() < 0.3
        npairs = 1 if separate else self.rng.choices((1, 2, 3), (55, 35, 10))[0]
        sends, recvs, entries = [], [], []
        for _ in range(npairs):
            s = self.pick(lambda v: self.readable_numeric(v) and len(v.shape) >= 1
                          and not any(overlaps(v, r) for r in recvs))
            if s is None:
                break
            r = self.recv_target(s, sends + recvs + [s])
            if r is None:
                break
            k = self.rng.choices((1, -1, 0, 2), (45, 25, 20, 10))[0]
            tag = self.tag
            self.tag += 1
            sends.append(s)
            recvs.append(r)
            entries.append(("isend", peer_shift(k), tag, s))
            entries.append(("irecv", peer_shift(-k), tag, r))
            self.sent_bound[tag] = s.st.bound
            self.features["p2p self-send" if k == 0 else "p2p ring" if abs(k) == 1 else "p2p shift 2"] += 1
        if not entries:
            return False
        if not separate:
            self.rng.shuffle(entries)
            self.read(*[t for kind, _, _, t in entries if kind == "isend"])
            handles = [self.fresh_name("h") for _ in entries]
            self.emit(f"{', '.join(handles)} = c10d::batch_isend_irecv("
                      f"[{', '.join(repr_str(e[0]) for e in entries)}], "
                      f"[{', '.join(e[1].text for e in entries)}], "
                      f"[{', '.join(str(e[2]) for e in entries)}], "
                      f"[{', '.join(e[3].name for e in entries)}], \"world\")")
            for h, (kind, peer, tag, t) in zip(handles, entries):
                self.post(h, kind, peer, tag, t)
            self.features["c10d::batch_isend_irecv"] += 1
            return True
        # isend + irecv_ as two statements, maybe with unrelated work between them
        if self.rng.random() < 0.5:
            entries.reverse()
        self.no_waits = True
        for i, (kind, peer, tag, t) in enumerate(entries):
            h = self.fresh_name("h")
            if kind == "isend":
                self.read(t)
                self.emit(f'{h} = c10d::isend({t.name}, {peer.text}, {tag}, "world")')
            else:
                self.emit(f'{h} = c10d::irecv_({t.name}, {peer.text}, {tag}, "world")')
            self.post(h, kind, peer, tag, t)
            if i == 0:
                for _ in range(self.rng.randint(0, 2)):
                    self.step(compute_only=True)
        self.no_waits = False
        self.features["c10d::isend + c10d::irecv_"] += 1
        return True

    def post(self, handle, kind, peer, tag, t):
        if kind == "irecv":
            self.write(t, t.st.bound)  # the received values' bound is added below
        h = Value(handle, t.dtype, t.shape, t.st, dict(t.lay), ready=False)
        h._fp = t._fp
        self.values.append(h)
        self.log.append(("def", h))
        f = InFlight(h, "send" if kind == "isend" else "recv", t, tag)
        f.peer = peer
        self.inflight.append(f)
        self.log.append(("post", h, f.kind, t, peer, tag))
        if kind == "irecv":  # the buffer gets the (same-shaped) send buffer's values
            t.st.bound = max(t.st.bound, self.sent_bound[tag])

    def op_wait(self):
        if not self.inflight:
            return False
        self.wait(self.rng.choice(self.inflight).handle)
        return True

    def wait(self, h):
        named = self.rng.random() < 0.35
        if named:
            w = self.fresh_name("w")
            self.emit(f"{w} = c10d::wait_tensor({h.name})")
        else:
            self.emit(f"c10d::wait_tensor({h.name})")
        self.log.append(("wait", h))
        self.inflight = [f for f in self.inflight if f.handle is not h]
        h.ready = True
        if named:
            z = Value(w, h.dtype, h.shape, h.st, dict(h.lay))
            z._fp = h._fp
            self.values.append(z)
            self.log.append(("def", z))
        self.features["c10d::wait_tensor"] += 1

    # -- driver -----------------------------------------------------------------------------

    ACTIONS = (("binary", 14), ("unary", 6), ("where", 4), ("reduce", 4), ("mm", 3), ("cat", 3),
               ("clone", 2), ("factory", 2), ("view", 14), ("inplace", 14), ("out", 5),
               ("collective", 10), ("symm", 5), ("p2p", 8))
    COMPUTE = ("binary", "unary", "where", "reduce", "clone", "view")

    def step(self, compute_only=False):
        if compute_only:
            name = self.rng.choice(self.COMPUTE)
        else:
            pending = {id(f.handle) for f in self.inflight}
            if pending and not self.no_waits and self.rng.random() < 0.12 + 0.08 * len(pending):
                return self.op_wait()
            actions = self.ACTIONS
            if not self.coll_during_p2p and any(f.tag is not None for f in self.inflight):
                actions = [a for a in actions if a[0] not in ("collective", "symm")]
            names, weights = zip(*actions)
            name = self.rng.choices(names, weights)[0]
        return getattr(self, "op_" + name)()

    def generate(self):
        self.make_inputs()
        target = self.rng.randint(12, 46)
        guard = 0
        while self.stmt_count() < target and guard < 400:
            guard += 1
            self.step()
            if self.stmt_count() >= MAX_STMTS - 8 - 2 * len(self.inflight):
                break
        while self.inflight:
            f = self.inflight[0]
            self.wait(f.handle)
        self.make_return()
        return self.text()

    def make_return(self):
        def ok(v):
            return (v.ready and v.dtype != "bool" and shape_const(v.shape) and self.can_read(v)
                    and len(v.shape) >= 1 and max_numel(v.shape) <= MAX_ELEMS)
        rets = []
        for _ in range(self.rng.randint(1, 3)):
            if self.rng.random() < 0.25:
                v = self.pick(lambda v: ok(v) and v not in rets and v.st.input_name is not None)
            else:
                v = self.pick(lambda v: ok(v) and v not in rets)
            if v is not None:
                rets.append(v)
        if not rets:
            rets.append(self.inputs[0])
        for v in rets:
            self.read(v)
            if v.st.input_name:
                self.features["return aliases a graph input"] += 1
        self.returns = rets
        self.lines.append("  return " + ", ".join(v.name for v in rets))

    def text(self):
        params = ", ".join(f"{v.name}: {v.dtype}{shape_text(v.shape, True)}" for v in self.inputs)
        rtypes = ", ".join(f"{v.dtype}{shape_text(v.shape, True)}" for v in self.returns)
        head = [f"# generated by tests/diff/gen_programs.py ({self.name}"
                + (", world-agnostic" if self.agnostic else "") + ")",
                f"graph @{self.name}({params}) -> ({rtypes}) {{"]
        return "\n".join(head + self.lines + ["}"]) + "\n"


def generate(seed, index, agnostic, coll_during_p2p=True):
    g = Gen(seed, index, agnostic, coll_during_p2p)
    return g, g.generate()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--out", help="directory for prog_<seed>_<i>.sf")
    ap.add_argument("--world-agnostic", action="store_true",
                    help="valid for every world size (nothing split by world)")
    ap.add_argument("--no-coll-during-p2p", action="store_true",
                    help="issue no collective while a P2P op is in flight (valid programs either "
                         "way; this isolates runtimes that need the sender's help to progress a send)")
    ap.add_argument("--check-self", action="store_true",
                    help="validate every program's invariants; exit 1 on a violation")
    ap.add_argument("--stats", action="store_true", help="print how many programs use each feature")
    args = ap.parse_args(argv)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    feats = collections.Counter()
    bad = 0
    for i in range(args.count):
        g, text = generate(args.seed, i, args.world_agnostic, not args.no_coll_during_p2p)
        for f in g.features:
            feats[f] += 1
        if args.check_self:
            errs = check_program(g, text)
            if errs:
                bad += 1
                print(f"{g.name}: " + "; ".join(errs[:5]), file=sys.stderr)
        if args.out:
            with open(os.path.join(args.out, f"{g.name}.sf"), "w") as fh:
                fh.write(text)
        elif not args.check_self and not args.stats:
            sys.stdout.write(text)
    if args.stats:
        for f, n in sorted(feats.items()):
            print(f"{n:5d}  {f}")
    if args.check_self:
        print(f"check-self: {args.count - bad} ok, {bad} with violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
