"""sft.compile: the signature cache, parameters as inputs, mutation in place,
errors that name the op and the user's line, export to .sf."""
import os
import subprocess

import pytest
import torch
import torch.nn as nn

import symmflow.torch as sft
from conftest import bitwise_equal, randn


def add_scaled(x, y, alpha):
    return x + alpha * y


def test_one_program_per_signature_and_non_tensor_arguments_are_part_of_it():
    fast = sft.compile(add_scaled)
    x, y = randn(4, 4, seed=1), randn(4, 4, seed=2)
    a = fast(x, y, 2.0)
    fast(x.clone(), y.clone(), 2.0)
    assert fast.programs == 1
    b = fast(x, y, 3.0)
    assert fast.programs == 2 and not torch.equal(a, b)
    fast(randn(2, 4), randn(2, 4), 2.0)
    fast(x.t(), y, 2.0)  # other strides
    assert fast.programs == 4
    torch.testing.assert_close(fast(x.t(), y, 2.0), x.t() + 2.0 * y)


def test_parameters_are_inputs_not_constants():
    lin = nn.Linear(4, 3)
    fast = sft.compile(lin)
    x = randn(2, 4)
    torch.testing.assert_close(fast(x), lin(x))
    with torch.no_grad():
        lin.weight.mul_(2)  # an optimizer step
    torch.testing.assert_close(fast(x), lin(x))
    assert fast.sf_text(x).count(": f32[3, 4]") == 1  # the weight is a graph input


def test_inputs_written_in_place_are_written_in_the_callers_tensor():
    def f(x, y):
        x.add_(y)
        x[0].mul_(3)  # through a view
        return x.sum()

    fast = sft.compile(f)
    x, y = randn(3, 4, seed=3), randn(3, 4, seed=4)
    xe, xc = x.clone(), x.clone()
    torch.testing.assert_close(fast(xc, y), f(xe, y))
    torch.testing.assert_close(xc, xe)


def test_strided_inputs_cross_without_a_copy():
    def f(x):
        return x * 2

    base = randn(6, 8)
    v = base[::2, 1:7].t()
    fast = sft.compile(f)
    assert bitwise_equal(fast(v), fast.run_eager_sf(v))
    torch.testing.assert_close(fast(v), v * 2)


def test_every_dtype_compiles():
    def f(x):
        return x + x

    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16, torch.int32, torch.int64):
        x = (torch.arange(6) - 2).to(dt)
        assert torch.equal(sft.compile(f)(x), x + x)


def test_an_op_symmflow_lacks_names_the_aten_op_and_the_users_line():
    def f(x):
        return torch.cumprod(x, 0)  # the line the error must name

    with pytest.raises(sft.Error, match=r"test_compile.py:\d+: return torch.cumprod\(x, 0\).*aten::cumprod"):
        sft.compile(f)(randn(4))


def test_data_dependent_control_flow_is_an_error_naming_the_line():
    def f(x):
        if x.sum() > 0:
            return x + 1
        return x - 1

    with pytest.raises(sft.Error, match=r"test_compile.py:\d+.*data-dependent control flow"):
        sft.compile(f)(randn(4))


def test_a_non_cpu_tensor_is_refused():
    with pytest.raises(sft.Error, match="meta"):
        sft.compile(add_scaled)(torch.empty(2, device="meta"), torch.empty(2, device="meta"), 1.0)


def test_unknown_group_in_a_compiled_function():
    def f(x):
        return sft.all_reduce(x, group="nope")

    with pytest.raises(sft.Error, match=r"test_compile.py:\d+.*no process group named 'nope'"):
        sft.compile(f)(randn(4))


def ring_shift(x):
    rank, world = sft.rank(), sft.world_size()
    out = torch.zeros(x.shape)
    for w in sft.batch_isend_irecv([sft.P2POp("isend", x, (rank + 1) % world),
                                    sft.P2POp("irecv", out, (rank - 1) % world)]):
        w.wait()
    return out * 2 + x


def test_export_writes_one_spmd_program_that_symmflow_run_checks(rank, world):
    path = os.path.join(os.environ.get("SF_PY_TEST_TMP", "/tmp"), f"sf_ring_shift.w{world}.sf")
    x = randn(8, seed=100 + rank)
    text = sft.export(ring_shift, (x,), path)
    head = sft.compile(ring_shift).explain(x).splitlines()[0]  # collective: tracing communicates
    if world > 1:
        assert "(rank+1)%world" in text, text
    if rank == 0:
        exe = os.environ.get("SYMMFLOW_CLI", "symmflow")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SYMMFLOW_") or k == "SYMMFLOW_VERIFY"}
        trace = path + ".trace.json"
        r = subprocess.run([exe, "run", path, "--nproc", str(world), "--check", "--explain", "--trace", trace],
                           env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "check: OK" in r.stdout and "explain @ring_shift" in r.stdout
        import json
        with open(trace) as f:
            assert "c10d::batch_isend_irecv" in json.dumps(json.load(f))  # the timeline has the P2P op
        # Every report agrees: the command line's explain of the exported file says
        # what fast.explain says of the traced program (same counts, same copies).
        c = subprocess.run([exe, "compile", path, "--world", str(world), "--rank", "0", "--explain"], env=env,
                           capture_output=True, text=True, timeout=120)
        assert c.returncode == 0, c.stderr
        cli_head = next(l for l in c.stdout.splitlines() if l.startswith("explain @"))
        assert cli_head == head
    sft.all_reduce(torch.zeros(1))  # every rank waits for rank 0's run


def test_numpy_arrays_are_compiled_arguments_written_in_place():
    import numpy as np

    def f(x):
        x.mul_(2)
        return x + 1

    a = np.arange(6, dtype=np.float32)
    out = sft.compile(f)(a)
    assert np.array_equal(a, np.arange(6, dtype=np.float32) * 2)  # the caller's array, written
    assert torch.equal(out, torch.from_numpy(a) + 1)


def reduce_after_a_write_through_another_view(y, w):
    v = y.view(-1)
    h = w @ w  # compute the collective does not need: it moves up past it
    y.add_(1)  # ... but not past this write of what it reads (through v)
    return sft.all_reduce(v * 3), h


def test_collectives_move_up_past_compute_but_not_past_writes(world):
    y, w = randn(2, 3, seed=5), randn(4, 4, seed=6)
    fast = sft.compile(reduce_after_a_write_through_another_view)
    ye, yc = y.clone(), y.clone()
    r, _ = fast(yc, w)
    torch.testing.assert_close(r, (y.reshape(-1) + 1) * 3 * world)
    torch.testing.assert_close(yc, ye + 1)
    text = fast.sf_text(y.clone(), w)
    assert text.index("aten::add_") < text.index("c10d::all_reduce(")

    def reduce_first(x, w):
        h = w @ w
        return sft.all_reduce(x * 3), h

    text = sft.compile(reduce_first).sf_text(y, w)
    assert text.index("c10d::all_reduce(") < text.index("aten::mm")  # started before the unrelated matmul
