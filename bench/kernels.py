"""symmflow's CPU kernels against PyTorch eager, op by op, in one process
(docs/performance.md "Kernels: symmflow vs PyTorch eager").

    PYTHONPATH=build/dev/python /usr/bin/python3 bench/kernels.py [--trials 7] [--only exp,mm] [--json out.json]

Both sides get the same torch tensors: symmflow through symmflow._C.call_op (the
eager dispatcher C++ code uses, tensors shared through DLPack, no copies; each
input is wrapped once, outside the timed calls), PyTorch through its own op.
The "floor" family times neg and add on one-element tensors: the per-call cost
that is not the kernel's (dispatch, allocation), on each side. One thread each (torch.set_num_threads(1); symmflow's default
SYMMFLOW_BLAS_THREADS=1). Every case runs in rounds (symmflow, torch, symmflow,
torch, ...) so that the machine's drift hits both alike; each trial times enough
calls for ~20 ms, and the table gives the median of the trials in microseconds per
call and the ratio symmflow / torch (< 1: symmflow is faster). Each case also
checks once that both results agree (allclose), so a fast wrong kernel shows.

The "floor us" column is a bandwidth roofline for the cases one op call makes:
the bytes the op must move (each input tensor read once, the result written
once) at the bandwidth one core reaches copying f32 tensors of the case's
element count (torch's copy_ into a preallocated tensor, timed in the same
rounds as the case: 8 bytes moved per element). A case whose two sides both sit near their
floor is bound by memory, not by either kernel; a case far above it is bound
by compute or per-call costs. Chains written as several calls get no floor, nor
cases past 1M elements (FLOOR_MAX).

Families and sizes: pointwise unary, binary (also a broadcast row, a broadcast
column [R, 1], pow(x, 2) and transposed operands) and reductions at 64K and 1M
elements (f32), matmul at 256 and 512, softmax and layer_norm over rows of
256 x 256 and 1024 x 1024, and the issue's chain add -> gelu -> exp and a bias
add -> relu -> mul (also at 16M, past the L3 cache), each op by op (eager) and fused
(the symmflow::fused_pointwise node fuse_pointwise makes of it); RMSNorm and a
softmax written out as PyTorch code holds them, fused (the symmflow::fused_rows
node fuse_rows makes of each) against PyTorch eager running the same ops
(RMSNorm op by op too), at 64K, 1M and 4M.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

import symmflow._C as _C
from symmflow.torch import _tensors


_sf_views = {}


def sf(t):
    """t as a symmflow tensor over the same memory, converted once per torch tensor
    (the DLPack round trip, ~5 us, is the binding's cost, not the kernel's)."""
    if isinstance(t, list):
        return [sf(e) for e in t]
    if not isinstance(t, torch.Tensor):
        return t
    key = id(t)
    if key not in _sf_views:
        _sf_views[key] = (t, _tensors.to_sf(t))  # keeps t alive, so its id stays its own
    return _sf_views[key][1]


def sf_call(op, *args, **kw):
    return _C.call_op(op, [sf(a) for a in args], {k: sf(v) for k, v in kw.items()})


def sf_op(op, *args):
    """A call of op with its arguments converted once, outside the timed calls, as
    PyTorch's side gets its tensors ready: what a call then times is the binding,
    the dispatcher and the kernel, not this script's conversion loop (~0.5 us)."""
    ready = [sf(a) for a in args]
    call = lambda: _C.call_op(op, ready, {})
    call.reads = [t for a in args for t in (a if isinstance(a, list) else [a]) if isinstance(t, torch.Tensor)]
    return call


# Up to 1M elements (4 MiB tensors): past that, glibc maps a large result afresh
# on many calls and its page faults dominate both sides (a 64 MiB result: ~50 ms
# of faults here against ~4 ms for its copy), and the floor's own buffers,
# made once, shift which calls those are.
FLOOR_MAX = 1 << 20


def bytes_moved(f_sf, result):
    """The bytes a single call must move: each input read once (a view of a tensor
    already counted, like pow(x, 2)'s x or x.t(), counts once), the result written
    once; None for a chain of calls."""
    reads = getattr(f_sf, "reads", None)
    if reads is None:
        return None
    seen, n = set(), result.numel() * result.element_size()
    for t in reads:
        if t.data_ptr() not in seen:
            seen.add(t.data_ptr())
            n += t.numel() * t.element_size()
    return n


# fuse_pointwise's programs for the chains below (docs/ir.md, "Fused elementwise chains").
CHAIN = "aten::add.Tensor(x0, x1, 1); aten::gelu(t0, 'none'); aten::exp(t1)"
BIAS_RELU = "aten::add.Tensor(x0, x1, 1); aten::relu(t0); aten::mul.Scalar(t1, 0.5)"

# fuse_rows' programs for RMSNorm and a softmax written out (ops/fused_rows.h).
RMS_NORM = ("aten::pow.Tensor_Scalar(x0, 2); aten::mean.dim(t0, [-1], true, None); aten::add.Scalar(t1, 1e-06, 1); "
            "aten::rsqrt(t2); aten::mul.Tensor(x0, t3); aten::mul.Tensor(t4, x1)")
SOFTMAX = ("aten::amax(x0, [-1], true); aten::sub.Tensor(x0, t0, 1); aten::exp(t1); "
           "aten::sum.dim_IntList(t2, [-1], true, None); aten::div.Tensor(t2, t3)")


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def softmax_written_out(x):
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def cases():
    """(family, name, elements, symmflow callable, torch callable)."""
    g = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, generator=g) * 4 - 2

    out = []
    one, one2 = rand(1), rand(1)
    out.append(("floor", "neg 1", 1, sf_op("aten::neg", one), lambda: torch.neg(one)))
    out.append(("floor", "add 1", 1, sf_op("aten::add", one, one2), lambda: torch.add(one, one2)))

    # One scope per size: the lambdas below read x, y, row, xt when called, so in a
    # loop body they would all see the last size's tensors (the 64K cases ran on 1M).
    def sized(n, shape):
        x, y, pos = rand(*shape), rand(*shape), rand(*shape).abs() + 0.1
        row, col = rand(shape[1]), rand(shape[0], 1)  # a bias row, a per-row statistic
        xt = x.t()  # a transposed (strided) view
        numel = x.numel()
        for op in ("exp", "log", "tanh", "sigmoid", "erf", "neg", "sqrt", "relu"):
            arg = pos if op in ("log", "sqrt") else x
            out.append(("unary", "%s %s" % (op, n), numel, sf_op("aten::" + op, arg),
                        lambda op=op, a=arg: getattr(torch, op)(a)))
        out.append(("unary", "gelu %s" % n, numel, sf_op("aten::gelu", x), lambda a=x: F.gelu(a)))
        out.append(("unary", "silu %s" % n, numel, sf_op("aten::silu", x), lambda a=x: F.silu(a)))
        out.append(("unary", "exp %s transposed" % n, numel, sf_op("aten::exp", xt),
                    lambda a=xt: torch.exp(a)))
        for op in ("add", "mul", "div"):
            out.append(("binary", "%s %s" % (op, n), numel, sf_op("aten::" + op, x, y),
                        lambda op=op: getattr(torch, op)(x, y)))
        out.append(("binary", "add %s + row" % n, numel, sf_op("aten::add", x, row), lambda: x + row))
        out.append(("binary", "mul %s * col" % n, numel, sf_op("aten::mul", x, col), lambda: x * col))
        out.append(("binary", "pow %s ** 2" % n, numel, sf_op("aten::pow", x, 2), lambda: x.pow(2)))
        out.append(("binary", "add %s transposed" % n, numel, sf_op("aten::add", xt, y),
                    lambda: xt + y))
        out.append(("reduction", "sum %s" % n, numel, sf_op("aten::sum", x), lambda: torch.sum(x)))
        out.append(("reduction", "sum dim=-1 %s" % n, numel, sf_op("aten::sum", x, [-1]),
                    lambda: torch.sum(x, -1)))
        out.append(("reduction", "sum dim=0 %s" % n, numel, sf_op("aten::sum", x, [0]),
                    lambda: torch.sum(x, 0)))
        out.append(("reduction", "mean dim=-1 %s" % n, numel, sf_op("aten::mean", x, [-1]),
                    lambda: torch.mean(x, -1)))
        out.append(("reduction", "amax dim=-1 %s" % n, numel, sf_op("aten::amax", x, [-1]),
                    lambda: torch.amax(x, -1)))
        out.append(("reduction", "amax dim=0 %s" % n, numel, sf_op("aten::amax", x, [0]),
                    lambda: torch.amax(x, 0)))
        out.append(("reduction", "argmax dim=-1 %s" % n, numel, sf_op("aten::argmax", x, -1),
                    lambda: torch.argmax(x, -1)))
        out.append(("reduction", "argmax dim=0 %s" % n, numel, sf_op("aten::argmax", x, 0),
                    lambda: torch.argmax(x, 0)))
        out.append(("softmax", "softmax %s" % n, numel, sf_op("aten::_softmax", x, -1, False),
                    lambda: torch.softmax(x, -1)))
        w, b = rand(shape[1]), rand(shape[1])
        out.append(("layer_norm", "layer_norm %s" % n, numel,
                    sf_op("aten::layer_norm", x, [shape[1]], w, b),
                    lambda w=w, b=b, x=x, d=shape[1]: F.layer_norm(x, (d,), w, b)))
        out.append(("chain", "add->gelu->exp %s" % n, numel,
                    lambda: sf_call("aten::exp", sf_call("aten::gelu", sf_call("aten::add", x, y)[0])[0]),
                    lambda: torch.exp(F.gelu(x + y))))
        # The same chain as fuse_pointwise compiles it: one symmflow::fused_pointwise
        # node (one loop over 64 KiB tiles, the same kernels, bitwise equal).
        out.append(("chain", "add->gelu->exp %s fused" % n, numel,
                    sf_op("symmflow::fused_pointwise", [x, y], CHAIN),
                    lambda: torch.exp(F.gelu(x + y))))
        out.append(("chain", "add+row->relu->mul %s" % n, numel,
                    lambda: sf_call("aten::mul", sf_call("aten::relu", sf_call("aten::add", x, row)[0])[0], 0.5),
                    lambda: torch.relu(x + row) * 0.5))
        out.append(("chain", "add+row->relu->mul %s fused" % n, numel,
                    sf_op("symmflow::fused_pointwise", [x, row], BIAS_RELU),
                    lambda: torch.relu(x + row) * 0.5))

    def rows(n, shape):
        # Row-wise chains as fuse_rows compiles them: one symmflow::fused_rows node
        # (blocks of whole rows, each step's own kernel, bitwise equal to eager),
        # against PyTorch eager running the same written-out chain.
        x, rw = rand(*shape), rand(shape[1])
        numel = x.numel()
        out.append(("rows", "rmsnorm %s" % n, numel,
                    lambda: sf_call("aten::mul", sf_call("aten::mul", x, sf_call("aten::rsqrt", sf_call(
                        "aten::add", sf_call("aten::mean", sf_call("aten::pow", x, 2)[0], [-1], True)[0],
                        1e-6)[0])[0])[0], rw),
                    lambda: rms_norm(x, rw)))
        out.append(("rows", "rmsnorm %s fused" % n, numel,
                    sf_op("symmflow::fused_rows", [x, rw], RMS_NORM), lambda: rms_norm(x, rw)))
        out.append(("rows", "softmax written out %s fused" % n, numel,
                    sf_op("symmflow::fused_rows", [x], SOFTMAX), lambda: softmax_written_out(x)))

    for n, shape in (("64K", (256, 256)), ("1M", (1024, 1024))):
        sized(n, shape)
    for n, shape in (("64K", (256, 256)), ("1M", (1024, 1024)), ("4M", (4096, 1024))):
        rows(n, shape)
    # 16M f32 (64 MB per tensor): intermediates no longer fit the L3 cache, so
    # eager's extra passes over memory are what fusion saves.
    x, row = rand(4096, 4096), rand(4096)
    out.append(("chain", "add+row->relu->mul 16M", x.numel(),
                lambda: sf_call("aten::mul", sf_call("aten::relu", sf_call("aten::add", x, row)[0])[0], 0.5),
                lambda: torch.relu(x + row) * 0.5))
    out.append(("chain", "add+row->relu->mul 16M fused", x.numel(),
                sf_op("symmflow::fused_pointwise", [x, row], BIAS_RELU),
                lambda: torch.relu(x + row) * 0.5))
    for m in (256, 512):
        a, b, c = rand(m, m), rand(m, m), rand(m)
        out.append(("matmul", "mm %d" % m, m * m, sf_op("aten::mm", a, b),
                    lambda a=a, b=b: torch.mm(a, b)))
        out.append(("matmul", "addmm %d" % m, m * m, sf_op("aten::addmm", c, a, b),
                    lambda a=a, b=b, c=c: torch.addmm(c, a, b)))
        # The view made once: sf() converts each new torch tensor (DLPack), which a
        # b.t() inside the timed call would pay every time, leaking its cache entry.
        bt = b.t()
        out.append(("matmul", "mm %d transposed" % m, m * m, sf_op("aten::mm", a, bt),
                    lambda a=a, bt=bt: torch.mm(a, bt)))
    for bsz, t, d in ((4, 256, 64), (8, 512, 64)):
        q, k = rand(bsz, t, d), rand(bsz, d, t)
        out.append(("matmul", "bmm %dx%dx%d" % (bsz, t, d), bsz * t * t,
                    sf_op("aten::bmm", q, k), lambda q=q, k=k: torch.bmm(q, k)))
    return out


def as_torch(r):
    return _tensors.from_sf(r[0]) if isinstance(r, list) else r


CLOCK = time.perf_counter


def time_per_call(fn, iters):
    t0 = CLOCK()
    for _ in range(iters):
        fn()
    return (CLOCK() - t0) / iters


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--trial-ms", type=float, default=20.0, help="time per trial and side (default 20 ms)")
    ap.add_argument("--only", default="", help="comma-separated substrings of case names")
    ap.add_argument("--json", default=None, help="also write the records here")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: this thread's CPU time (time.thread_time), which time spent descheduled "
                         "does not inflate: for a machine other jobs load (both sides run on this thread)")
    a = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time if a.clock == "cpu" else time.perf_counter
    torch.set_num_threads(1)
    only = [s for s in a.only.split(",") if s]
    records = []
    all_cases = cases()
    # The floor's copies, one pair of tensors per element count, made with the
    # cases' inputs before any timed call: made later, they move the heap's top
    # and the allocator can then return and re-fault a large result every call.
    copy_bufs = {n: (torch.rand(n), torch.empty(n)) for n in sorted({c[2] for c in all_cases}) if n <= FLOOR_MAX}

    def copy_call(numel):
        src, dst = copy_bufs[numel]
        return lambda: dst.copy_(src)

    print("%-10s %-26s %12s %12s %8s %9s" % ("family", "case", "symmflow us", "torch us", "ratio", "floor us"))
    for fam, name, numel, f_sf, f_pt in all_cases:
        if only and not any(s in name for s in only):
            continue
        ref, got = f_pt(), as_torch(f_sf())
        # A matmul's sums of K products round differently in another order (oneDNN's
        # blocking against PyTorch's): near-zero entries miss a fixed atol by
        # rounding alone (mm 512: 4.6e-5, as far from the f64 product as
        # PyTorch's own). Its atol scales with the result's magnitude instead.
        atol = 1e-6 * float(ref.abs().max()) if fam == "matmul" else 1e-5
        agree = bool(torch.allclose(got, ref, rtol=1e-4, atol=atol, equal_nan=True))
        once = max(time_per_call(f_sf, 1), time_per_call(f_pt, 1), 1e-6)
        iters = max(1, int(a.trial_ms / 1e3 / once))
        # The floor's copy runs in the same rounds, so the machine's drift hits it alike.
        moved = bytes_moved(f_sf, ref)
        if numel > FLOOR_MAX:
            moved = None
        f_copy = None if moved is None else copy_call(numel)
        ts, tp, tc = [], [], []
        for _ in range(a.trials):
            ts.append(time_per_call(f_sf, iters))
            tp.append(time_per_call(f_pt, iters))
            if f_copy:
                tc.append(time_per_call(f_copy, iters))
        ms, mp = statistics.median(ts) * 1e6, statistics.median(tp) * 1e6
        floor = None if moved is None else moved / (8 * numel) * statistics.median(tc) * 1e6
        rec = {"family": fam, "case": name, "elements": numel, "symmflow_us": round(ms, 2),
               "torch_us": round(mp, 2), "ratio": round(ms / mp, 3), "agree": agree,
               "bytes_moved": moved, "floor_us": None if floor is None else round(floor, 2)}
        records.append(rec)
        print("%-10s %-26s %12.1f %12.1f %8.2f %9s%s" % (fam, name, ms, mp, ms / mp,
              "-" if floor is None else "%.1f" % floor, "" if agree else "  DIFFERS"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
