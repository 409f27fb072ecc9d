#!/usr/bin/env python3
"""Writes pipeline_1f1b.sf: a 1F1B pipeline whose ranks run different code, at 2
and 4 stages. A 1F1B stage's op order depends on how many forwards it runs
before its first backward (its warm-up, stages - 1 - rank), so each stage of
each size is a graph of its own; writing them by hand would be long and easy
to get wrong, hence this script. The C++ twin (pipeline_1f1b.cc) runs the same
schedule from a loop.

    python3 examples/pipeline/make_1f1b_sf.py           # rewrites pipeline_1f1b.sf
    python3 examples/pipeline/make_1f1b_sf.py --check   # exit 1 when the file differs (a ctest)
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
M, ROWS, N = 4, 4, 16  # micro-batches, rows per micro-batch, features

HEADER = f"""\
# A 1F1B pipeline (one forward, one backward) over the ranks, the .sf twin of
# pipeline_1f1b.cc; written by make_1f1b_sf.py (edit that, then run it).
#
# Stage r holds the weights %w of layer r: forward, a = relu(h @ w) on each of
# {M} micro-batches of {ROWS} rows (stage 0 reads them from %x, the others receive
# them from stage r-1), sent on to stage r+1; the last stage's loss is
# 0.5 * sum((a - t)^2) against the target %t, so its gradient is a - t.
# Backward, per micro-batch: g = grad_a * (y > 0) (relu's mask), the weights'
# gradient grad_w += h^T @ g, and grad_h = g @ w^T sent back to stage r-1.
# Each stage returns its grad_w, summed over the micro-batches in order.
#
# The 1F1B order: stage r runs stages - 1 - r warm-up forwards, then one
# forward and one backward in turn, then the remaining backwards. Each stage
# keeps the next receive of each direction posted ahead; every send waits at
# the end, so send and receive interleave with compute.
#
# A stage's order depends on the stage count, so the rank sets say which world
# each graph is for: `ranks 0..2-world` holds rank 0 at 2 stages and nothing at
# 4, `ranks 0..world-4` the opposite (a range is empty when its first end is
# larger). The file runs at 2 and 4 ranks; at 3, rank 0 runs no graph (an error).
# nproc: 2, 4
#
#   symmflow run examples/pipeline/pipeline_1f1b.sf --nproc 4 --check
#   python3 examples/pipeline/reference_1f1b.py --symmflow build/dev/symmflow --nproc 4
"""


def order(stages, rank):
    """The 1F1B order of one stage: ("F", m) and ("B", m) steps."""
    warm = min(stages - 1 - rank, M)
    steps = [("F", m) for m in range(warm)]
    for i in range(M - warm):
        steps += [("F", warm + i), ("B", i)]
    return steps + [("B", m) for m in range(M - warm, M)]


def stage_graph(stages, rank, rankset, what):
    first, last = rank == 0, rank == stages - 1
    out = [f"# {what}: {order_text(stages, rank)}",
           f"graph @pipeline_1f1b ranks {rankset} (%x: f32[{M * ROWS}, {N}], %w: f32[{N}, {N}], "
           f"%t: f32[{M * ROWS}, {N}]) -> (f32[{N}, {N}]) {{"]
    emit = lambda line: out.append("  " + line)

    def post_forward(m):  # the receive of micro-batch m's activations
        if not first and m < M:
            emit(f"%b{m} = aten::zeros([{ROWS}, {N}], f32)")
            emit(f'%q{m} = c10d::irecv_(%b{m}, rank-1, {m}, "world")')

    def post_backward(m):  # the receive of micro-batch m's gradient
        if not last and m < M:
            emit(f"%c{m} = aten::zeros([{ROWS}, {N}], f32)")
            emit(f'%p{m} = c10d::irecv_(%c{m}, rank+1, {m}, "world")')

    post_forward(0)
    post_backward(0)
    sends = []
    for kind, m in order(stages, rank):
        if kind == "F":
            if first:
                emit(f"%h{m} = aten::slice(%x, 0, {m * ROWS}, {(m + 1) * ROWS})")
            else:
                emit(f"%h{m} = c10d::wait_tensor(%q{m})")
                post_forward(m + 1)
            emit(f"%y{m} = aten::mm(%h{m}, %w)")
            emit(f"%a{m} = aten::relu(%y{m})")
            if not last:
                emit(f'%s{m} = c10d::isend(%a{m}, rank+1, {m}, "world")')
                sends.append(f"%s{m}")
            continue
        if last:
            emit(f"%t{m} = aten::slice(%t, 0, {m * ROWS}, {(m + 1) * ROWS})")
            emit(f"%d{m} = aten::sub(%a{m}, %t{m})")
        else:
            emit(f"%d{m} = c10d::wait_tensor(%p{m})")
            post_backward(m + 1)
        emit(f"%k{m} = aten::gt(%y{m}, 0.0)")
        emit(f"%g{m} = aten::mul(%d{m}, %k{m})")
        emit(f"%ht{m} = aten::t(%h{m})")
        emit(f"%gw{m} = aten::mm(%ht{m}, %g{m})")
        if m > 0:
            emit(f"%acc{m} = aten::add(%acc{m - 1}, %gw{m})" if m > 1 else f"%acc{m} = aten::add(%gw0, %gw{m})")
        if not first:
            if m == 0:
                emit("%wt = aten::t(%w)")
            emit(f"%e{m} = aten::mm(%g{m}, %wt)")
            emit(f'%z{m} = c10d::isend(%e{m}, rank-1, {m}, "world")')
            sends.append(f"%z{m}")
    for s in sends:
        emit(f"c10d::wait_tensor({s})")
    emit(f"return %acc{M - 1}")
    out.append("}")
    return "\n".join(out) + "\n"


def order_text(stages, rank):
    return " ".join(f"{k}{m}" for k, m in order(stages, rank))


def program():
    graphs = [
        (2, 0, "0..2-world", "2 stages, stage 0"),
        (4, 0, "0..world-4", "4 stages, stage 0"),
        (4, 1, "1..world-3", "4 stages, stage 1"),
        (4, 2, "2..world-2", "4 stages, stage 2"),
        (4, 3, "world-1", "the last stage (2 and 4 stages)"),
    ]
    assert order(2, 1) == order(4, 3)  # the last stage is one graph for both sizes
    return HEADER + "".join("\n" + stage_graph(*g) for g in graphs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = ap.parse_args()
    path = os.path.join(HERE, "pipeline_1f1b.sf")
    text = program()
    if args.check:
        with open(path) as f:
            same = f.read() == text
        print(f"{path}: {'up to date' if same else 'differs from what make_1f1b_sf.py writes: run it'}")
        return 0 if same else 1
    with open(path, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
