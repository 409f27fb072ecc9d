"""sft.export: a traced PyTorch function as one .sf file that every rank runs.

Each rank traces its own program (Python control flow is resolved per rank), so
rank-dependent integers (a ring's peers, a shard's offset) differ from rank to
rank. The ranks' texts are gathered; where they differ only in integer literals,
each literal is written as the first expression over `rank` and `world` that
gives every rank its own value:

    rank 0: [1, 1]   rank 1: [0, 0]   ->   [(rank+1)%world, (rank+1)%world]

A program whose ranks differ otherwise (ops, shapes: pipeline stages) is written
as one graph per rank, each with its rank set (docs/ir.md, "Programs whose ranks
run different code"):

    graph @f ranks 0 (...) -> (...) { ...rank 0's program... }
    graph @f ranks 1 (...) -> (...) { ...rank 1's program... }
"""
import re

from .. import _C

_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|#[^\n]*|-?\d+\.\d*(?:e[-+]?\d+)?|-?\d+e[-+]?\d+|-?\d+|\s+|.', re.S)
_INT = re.compile(r"-?\d+$")


def _tokens(text):
    return _TOKEN.findall(text)


def _candidates(world):
    yield "rank"
    for k in range(1, world):
        yield f"(rank+{k})%world"
    for a in range(-4, 5):
        for b in range(-world * 4, world * 4 + 1):
            if a not in (0, 1) or b != 0:
                if a != 0:
                    yield f"rank*{a}+{b}" if b >= 0 else f"rank*{a}-{-b}"


def _eval(expr, rank, world):
    py = expr.replace("/", "//")
    return eval(py, {}, {"rank": rank, "world": world})  # our own expressions only


def _fit(values, world):
    for e in _candidates(world):
        if all(_eval(e, r, world) == v for r, v in enumerate(values)):
            return e
    return None


def merge(texts):
    """One .sf text for the ranks' texts (rank order): one SPMD graph where they differ only in integers
    that an expression over rank and world fits, else one graph per rank."""
    world = len(texts)
    if all(t == texts[0] for t in texts):
        return texts[0]
    note = (f"# exported from {world} ranks: integers that differ by rank are written as the first expression "
            f"over rank and world that fits these {world} ranks; run it with --nproc {world}\n")
    toks = [_tokens(t) for t in texts]
    out = []
    for i, t0 in enumerate(toks[0]):
        col = [tk[i] if i < len(tk) else None for tk in toks]
        if all(c == t0 for c in col):
            out.append(t0)
            continue
        if t0.startswith("#"):
            out.append(t0)
            continue
        if all(c is not None and _INT.match(c) for c in col):
            e = _fit([int(c) for c in col], world)
            if e is not None:
                out.append(e)
                continue
        return per_rank(texts)
    if any(len(tk) != len(toks[0]) for tk in toks):
        return per_rank(texts)
    return note + "".join(out)


def per_rank(texts):
    """The ranks' programs, one graph per rank with its rank set (`graph @f ranks 1 (`)."""
    note = f"# exported from {len(texts)} ranks that traced different programs: one graph per rank\n"
    graphs = [re.sub(r"^graph @([A-Za-z0-9_]+)\(", lambda m, r=r: f"graph @{m.group(1)} ranks {r} (", t, count=1,
                     flags=re.M) for r, t in enumerate(texts)]
    return note + "\n".join(graphs)


def export(fn, args, kwargs, path):
    from . import CompiledFunction, init
    init()
    cf = fn if isinstance(fn, CompiledFunction) else CompiledFunction(fn)
    mine = cf.sf_text(*args, **kwargs)
    texts = [b.decode() for b in _C.all_gather_bytes(mine.encode())]
    text = merge(texts)
    if _C.rank() == 0:
        with open(path, "w") as f:
            f.write(text)
    return text
