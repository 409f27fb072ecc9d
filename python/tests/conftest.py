"""pytest for the symmflow package, run on every rank of a job:

    symmflow launch --nproc 2 -- /usr/bin/python3 -m pytest python/tests

Every rank runs the same tests in the same order (collectives match up). A test
that needs more ranks than the job has is skipped on every rank alike.
"""

import pytest
import torch

import symmflow.torch as sft


def pytest_configure(config):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    sft.init()


@pytest.fixture
def rank():
    return sft.rank()


@pytest.fixture
def world():
    return sft.world_size()


def gen(seed):
    """The same random numbers on every rank (weights of an unsharded model)."""
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=gen(seed), dtype=torch.float32).to(dtype)


def bitwise_equal(a, b):
    """Same dtype, shape and bits (NaNs by their bits, -0.0 differs from 0.0)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return torch.equal(a.contiguous().reshape(-1).view(torch.uint8), b.contiguous().reshape(-1).view(torch.uint8))


def check_three_ways(fast, fn, args, reference=None, atol=1e-5, rtol=1e-5):
    """The claims every module test makes:
    (a) compiled equals the same function run eagerly (PyTorch compute, symmflow
        communication) up to kernel rounding;
    (b) it equals PyTorch on the unsharded problem, in one process, no communication;
    (c) it equals symmflow's own eager interpreter on the traced .sf bitwise.
    Returns the compiled result."""
    clone = lambda a: a.clone() if isinstance(a, torch.Tensor) else a
    eager = fn(*[clone(a) for a in args])
    compiled = fast(*[clone(a) for a in args])
    flat_e = eager if isinstance(eager, (list, tuple)) else [eager]
    flat_c = compiled if isinstance(compiled, (list, tuple)) else [compiled]
    for e, c in zip(flat_e, flat_c):
        torch.testing.assert_close(c, e, atol=atol, rtol=rtol)
    if reference is not None:
        flat_r = reference if isinstance(reference, (list, tuple)) else [reference]
        for r, c in zip(flat_r, flat_c):
            torch.testing.assert_close(c, r, atol=atol * 10, rtol=rtol * 10)
    sf_eager = fast.run_eager_sf(*[clone(a) for a in args])
    flat_s = sf_eager if isinstance(sf_eager, (list, tuple)) else [sf_eager]
    for s, c in zip(flat_s, flat_c):
        assert s.dtype == c.dtype and s.shape == c.shape
        assert bitwise_equal(s, c), "compiled differs bitwise from symmflow's eager run of the exported .sf"
    return compiled


def torch_optimizer(name, params, lr, momentum=0.0):
    """torch.optim's SGD (with momentum) or Adam: the updates the references run."""
    return torch.optim.Adam(params, lr=lr) if name == "adam" else torch.optim.SGD(params, lr=lr, momentum=momentum)


def reference_step(model, opt, x, y):
    """One step of plain PyTorch training on (x, y) with the MSE loss; returns the loss."""
    import torch.nn.functional as F
    opt.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def torch_distributed():
    """torch.distributed's gloo group over this job's ranks (once per process): the
    reference that PyTorch's own DistributedDataParallel runs on. The ranks meet in
    a FileStore named after their launcher's pid (their common parent)."""
    import datetime
    import os
    import torch.distributed as dist
    if not dist.is_initialized():
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        tmp = os.environ.get("SF_PY_TEST_TMP", "/tmp")
        store = os.path.join(tmp, f"gloo_store.{os.getppid()}.w{sft.world_size()}")
        dist.init_process_group("gloo", init_method="file://" + store, rank=sft.rank(),
                                world_size=sft.world_size(), timeout=datetime.timedelta(seconds=60))
    return dist
