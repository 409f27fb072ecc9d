"""The model behind gen_programs.py, and its independent checker.

A tensor is a Value: a Storage plus, for every (world, rank) with world in
1..4, its (offset, sizes, strides). Sizes may depend on the world size (Dim:
c * world**p) and offsets on the rank, as in `narrow(%x, 0, rank*(48/world),
48/world)`. Two values overlap when they share a storage and some element on
some (world, rank). check_program() replays a generated program's access log
against these footprints and reports every rule the program breaks.
"""
import collections

WORLDS = (1, 2, 3, 4)
COMBOS = tuple((w, r) for w in WORLDS for r in range(w))  # every (world, rank)
MAX_ELEMS = 4096
FLOATS = ("f32", "f64")
INTS = ("i32", "i64")
CAP = {"f32": 1e6, "f64": 1e6, "i32": 30000, "i64": 30000}  # operands of growing ops
MAX_STMTS = 60


# ---------------------------------------------------------------------------
# integer expressions over rank and world, and dimensions c * world**p


class IExpr:
    """An int argument: its text in the program and its value on (world, rank)."""

    def __init__(self, text, fn):
        self.text, self.fn = text, fn

    def __call__(self, w, r):
        return self.fn(w, r)


def K(c):
    return IExpr(str(c), lambda w, r: c)


RANK = IExpr("rank", lambda w, r: r)
LAST = IExpr("world-1", lambda w, r: w - 1)


def peer_shift(k):
    """(rank + k) mod world, spelled so that it never goes negative."""
    if k == 0:
        return RANK
    text = f"(rank+{k})%world" if k > 0 else (
        f"(rank-{-k}+world)%world" if k == -1 else f"(rank-{-k}+{-k}*world)%world")
    return IExpr(text, lambda w, r: (r + k) % w)


class Dim:
    """A size c * world**p, p in {-1, 0, 1}; c is a multiple of 12 when p == -1."""

    __slots__ = ("c", "p")

    def __init__(self, c, p=0):
        self.c, self.p = c, p

    def val(self, w):
        return self.c * w if self.p == 1 else self.c // w if self.p == -1 else self.c

    def key(self):
        return tuple(self.val(w) for w in WORLDS)

    def text(self):
        return {0: str(self.c), 1: f"{self.c}*world", -1: f"{self.c}/world"}[self.p]

    def __eq__(self, o):
        return isinstance(o, Dim) and self.key() == o.key()

    def __hash__(self):
        return hash(self.key())


def shape_text(shape, const=False):
    if const:
        return "[" + ", ".join(str(d.c) for d in shape) + "]"
    return "[" + ", ".join(d.text() for d in shape) + "]"


def shape_key(shape):
    return tuple(d.key() for d in shape)


def shape_const(shape):
    return all(d.p == 0 for d in shape)


def numel(shape, w):
    n = 1
    for d in shape:
        n *= d.val(w)
    return n


def max_numel(shape):
    return max(numel(shape, w) for w in WORLDS)


def contiguous_strides(sizes):
    strides, acc = [], 1
    for n in reversed(sizes):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def is_contiguous(sizes, strides):
    expect = 1
    for n, s in zip(reversed(sizes), reversed(strides)):
        if n != 1:
            if s != expect:
                return False
            expect *= n
    return True


def _dense(sizes, strides):
    """PyTorch's is_non_overlapping_and_dense."""
    dims = sorted((s, n) for n, s in zip(sizes, strides) if n > 1)
    expect = 1
    for s, n in dims:
        if s != expect:
            return False
        expect *= n
    return True


def elementwise_strides(shape, operands):
    """The strides of a fresh elementwise result (PyTorch's TensorIterator rule,
    src/symmflow/core/layout.h): `operands` are (sizes, strides) pairs in argument
    order, None for a number (PyTorch wraps it in a 0-d tensor)."""
    shape = tuple(shape)
    ops = [((), ()) if o is None else (tuple(o[0]), tuple(o[1])) for o in operands]
    if not ops:
        return contiguous_strides(shape)
    if all(sz == shape for sz, _ in ops):
        if all(0 in sz or is_contiguous(sz, st) for sz, st in ops):  # an empty tensor is contiguous
            return contiguous_strides(shape)
        if len(shape) == 4 and all(is_contiguous([sz[d] for d in (0, 2, 3, 1)], [st[d] for d in (0, 2, 3, 1)])
                                   for sz, st in ops):
            return tuple(elementwise_channels_last(shape))
        if all(_dense(sz, st) and st == ops[0][1] for sz, st in ops):
            return ops[0][1]

    def stride(o, d):  # o's stride of result dim d, 0 where o is broadcast
        sz, st = o
        lead = len(shape) - len(sz)
        if d < lead or (sz[d - lead] == 1 and shape[d] != 1):
            return 0
        return st[d - lead]

    def should_swap(d0, d1):
        for o in ops:
            s0, s1 = stride(o, d0), stride(o, d1)
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(reversed(range(len(shape))))  # perm[0]: the fastest dim
    for i in range(1, len(shape)):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(reversed(range(len(shape)))):
        return contiguous_strides(shape)
    out, acc = [0] * len(shape), 1
    for d in perm:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def elementwise_channels_last(shape):
    out, acc = [0] * 4, 1
    for d in (1, 3, 2, 0):
        out[d] = acc
        acc *= shape[d]
    return out


# ---------------------------------------------------------------------------
# the model: storages and the tensors (values) that view them


class Storage:
    def __init__(self, sid, dtype, numels, input_name=None, bound=0.0):
        self.sid, self.dtype, self.numels = sid, dtype, numels  # numels: w -> elements
        self.input_name, self.bound = input_name, bound


class Value:
    """A tensor name: its storage and, per (world, rank), (offset, sizes, strides)."""

    def __init__(self, name, dtype, shape, storage, layout, ready=True):
        self.name, self.dtype, self.shape, self.st = name, dtype, tuple(shape), storage
        self.lay, self.ready = layout, ready
        self._fp = {}

    def footprint(self, combo):
        fp = self._fp.get(combo)
        if fp is None:
            off, sizes, strides = self.lay[combo]
            idx = [off]
            for n, s in zip(sizes, strides):
                idx = [i + k * s for i in idx for k in range(n)]
            fp = self._fp[combo] = frozenset(idx)
        return fp

    def span(self, combo):
        off, sizes, strides = self.lay[combo]
        lo = off + sum((n - 1) * s for n, s in zip(sizes, strides) if s < 0)
        hi = off + sum((n - 1) * s for n, s in zip(sizes, strides) if s > 0)
        return lo, hi

    def contiguous(self):
        return all(is_contiguous(sz, st) for _, sz, st in self.lay.values())

    def rank_invariant(self):
        """The same layout on every (world, rank), and a W-independent storage."""
        lays = set(self.lay.values())
        return len(lays) == 1 and len(set(self.st.numels.values())) == 1

    def covers_storage(self):
        return all(len(self.footprint(c)) == self.st.numels[c[0]] for c in COMBOS)


def overlaps(a, b):
    if a.st is not b.st:
        return False
    for c in COMBOS:
        (alo, ahi), (blo, bhi) = a.span(c), b.span(c)
        if ahi < blo or bhi < alo:
            continue
        if a.footprint(c) & b.footprint(c):
            return True
    return False


def same_layout(a, b):
    return a.st is b.st and all(a.lay[c] == b.lay[c] for c in COMBOS)


class InFlight:
    """A posted op not yet waited: `kind` is 'send' (buffer must not be written)
    or 'recv' (buffer must not be read nor written)."""

    def __init__(self, handle, kind, buf, tag=None):
        self.handle, self.kind, self.buf, self.tag = handle, kind, buf, tag


def fmt_scalar(x, dtype):
    if dtype in INTS:
        return str(int(x))
    s = repr(float(x))
    return s if ("." in s or "e" in s) else s + ".0"


def repr_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def promote(a, b):
    if a == b:
        return a
    if a in FLOATS and b in FLOATS:
        return "f64"
    if a in INTS and b in INTS:
        return "i64"
    return a if a in FLOATS else b


def can_cast(src, dst):
    """May src's values be written into a dst tensor by an in-place op (PyTorch's rule)?"""
    return not (src in FLOATS and dst in INTS)


# ---------------------------------------------------------------------------
# the independent checker (--check-self)


def check_program(g, text):
    """Replays g's access log; returns a list of violations (empty: all good)."""
    errs = []
    inflight = []  # (handle name, kind, buffer Value)
    waited = collections.Counter()
    posted = set()
    defined = set()
    for ev in g.log:
        kind = ev[0]
        if kind == "def":
            if ev[1].name in defined:
                errs.append(f"{ev[1].name} defined twice")
            defined.add(ev[1].name)
        elif kind == "post":
            h, pk, buf = ev[1], ev[2], ev[3]
            if (h.name, pk) in posted:
                errs.append(f"handle {h.name} posted twice")
            posted.add((h.name, pk))
            if pk == "recv":
                for n, k2, b2 in inflight:
                    if overlaps(b2, buf):
                        errs.append(f"{h.name}: receive buffer {buf.name} overlaps in-flight {n}")
            inflight.append((h.name, pk, buf))
        elif kind == "wait":
            h = ev[1]
            waited[h.name] += 1
            if not any(n == h.name for n, _, _ in inflight):
                errs.append(f"wait on {h.name} which is not in flight")
            inflight = [e for e in inflight if e[0] != h.name]
        elif kind in ("read", "write"):
            v = ev[1]
            if v.name not in defined:
                errs.append(f"{v.name} used before its definition")
            for n, pk, buf in inflight:
                if (pk == "recv" or kind == "write") and overlaps(buf, v):
                    errs.append(f"{kind} of {v.name} races in-flight {n} ({pk} {buf.name})")
    if inflight:
        errs.append(f"never waited: {sorted(set(n for n, _, _ in inflight))}")
    for h, n in waited.items():
        if n != 1:
            errs.append(f"handle {h} waited {n} times")
    # P2P pairs: per tag one send and one recv, inverse peers, same dtype and shape
    by_tag = collections.defaultdict(list)
    for ev in g.log:
        if ev[0] == "post" and len(ev) > 4:
            by_tag[ev[5]].append(ev)
    for tag, evs in by_tag.items():
        kinds = sorted(e[2] for e in evs)
        if kinds != ["recv", "send"]:
            errs.append(f"tag {tag}: expected one send and one recv, got {kinds}")
            continue
        snd = next(e for e in evs if e[2] == "send")
        rcv = next(e for e in evs if e[2] == "recv")
        if snd[3].dtype != rcv[3].dtype or shape_key(snd[3].shape) != shape_key(rcv[3].shape):
            errs.append(f"tag {tag}: send {snd[3].name} and recv {rcv[3].name} differ in type")
        for (w, r) in COMBOS:
            dst = snd[4](w, r)
            if not 0 <= dst < w or rcv[4](w, dst) != r:
                errs.append(f"tag {tag}: on world {w}, rank {r} sends to {dst} who receives "
                            f"from {rcv[4](w, dst) if 0 <= dst < w else '?'}")
                break
    # shapes, sizes, statement count, the world-agnostic promise
    body = [l for l in text.splitlines()[2:-1]]
    if not 10 <= len(body) <= MAX_STMTS:
        errs.append(f"{len(body)} statements (expected 10..{MAX_STMTS})")
    for v in g.values:
        if max_numel(v.shape) > MAX_ELEMS and v.st.input_name is None and v.ready:
            errs.append(f"{v.name} has {max_numel(v.shape)} elements")
        for c in COMBOS:
            for i in v.footprint(c):
                if not 0 <= i < v.st.numels[c[0]]:
                    errs.append(f"{v.name} reaches outside its storage on world {c[0]} rank {c[1]}")
                    break
    for v in g.returns:
        if not shape_const(v.shape):
            errs.append(f"returned {v.name} has a world-dependent shape")
    if not g.coll_during_p2p:
        p2p = set()
        for ev in g.log:
            if ev[0] == "post" and len(ev) > 4:
                p2p.add(ev[1].name)
            elif ev[0] == "wait":
                p2p.discard(ev[1].name)
            elif ev[0] == "coll" and p2p:
                errs.append(f"a collective while {sorted(p2p)} are in flight")
                break
    if g.agnostic and "/world" in text:
        errs.append("world-agnostic program splits a dimension by world")
    for v in g.values:
        if v.dtype in FLOATS + INTS and v.st.bound > (1e30 if v.dtype in FLOATS else 2 ** 31 - 1):
            errs.append(f"{v.name} may reach |{v.st.bound:g}|")
            break
    return errs
