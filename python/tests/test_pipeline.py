"""Pipeline training (sft.pipeline_1f1b, sft.PipelineParallel): one stage of an
MLP per rank, micro-batches in 1F1B order, activations sent on and their
gradients sent back. Checked against PyTorch autograd on the whole model in one
process over the whole batch, compiled against symmflow's eager run of the same
.sf bitwise, and for copies: none planned, none staged at run time.

Runs at every world size of the python jobs (1 stage: gradient accumulation
alone) and in a 4-rank job of its own (python/CMakeLists.txt)."""
import re

import pytest
import torch
import torch.nn.functional as F
from torch.nn.utils.stateless import functional_call

import symmflow.torch as sft
from symmflow import _C
from symmflow.torch._pipeline import order_1f1b
from conftest import bitwise_equal, randn, reference_step, torch_optimizer

D_IN, D_OUT, M, MB = 12, 5, 4, 4  # features in and out, micro-batches, rows per micro-batch


def width(boundary):
    """The activation's features between stage boundary-1 and stage boundary:
    they differ per boundary, so activation_shape is a list. Every message is
    larger than an eager slot (4 KiB: MB x 264 f32 and up), so a send waits for its
    receive to be posted, eagerly too (where a schedule can deadlock)."""
    return 256 + 8 * boundary


def whole_model(stages, seed=3):
    """Every stage, the same weights on every rank: Linear + GELU, ReLU on the
    middle stages, the last one Linear alone."""
    torch.manual_seed(seed)
    layers = []
    for s in range(stages):
        d_in = D_IN if s == 0 else width(s)
        d_out = D_OUT if s == stages - 1 else width(s + 1)
        act = [] if s == stages - 1 else [torch.nn.GELU() if s == 0 else torch.nn.ReLU()]
        layers.append(torch.nn.Sequential(torch.nn.Linear(d_in, d_out), *act))
    return torch.nn.Sequential(*layers)


def activation_shapes(stages):
    return [(MB, width(b)) for b in range(1, stages)]


def batch(seed):
    return randn(M * MB, D_IN, seed=seed), randn(M * MB, D_OUT, seed=seed + 1)


def staged_copies(run):
    """The (count, bytes) the runtime's staged paths copied in this process during run()."""
    before = _C.staged_copy_stats()
    run()
    after = _C.staged_copy_stats()
    return after[0] - before[0], after[1] - before[1]


def test_1f1b_order_warms_up_then_alternates_then_cools_down():
    F_, B_ = (lambda m: ("F", m)), (lambda m: ("B", m))
    assert order_1f1b(4, 0, 4) == [F_(0), F_(1), F_(2), F_(3), B_(0), B_(1), B_(2), B_(3)]
    assert order_1f1b(4, 2, 4) == [F_(0), F_(1), B_(0), F_(2), B_(1), F_(3), B_(2), B_(3)]
    assert order_1f1b(4, 3, 4) == [F_(0), B_(0), F_(1), B_(1), F_(2), B_(2), F_(3), B_(3)]
    assert order_1f1b(4, 0, 2) == [F_(0), F_(1), B_(0), B_(1)]  # fewer micro-batches than warm-up
    for stages in (1, 2, 3, 4):
        for s in range(stages):
            alive, most = 0, 0
            for kind, _ in order_1f1b(stages, s, 6):
                alive += 1 if kind == "F" else -1
                most = max(most, alive)
            assert most == stages - s  # the activations stage s keeps at once


def test_pipeline_gradients_equal_the_unsharded_models(rank, world):
    model = whole_model(world)
    stage = model[rank]
    names = [n for n, _ in stage.named_parameters()]
    params = list(stage.parameters())
    x, y = batch(seed=30)

    def step(params, x, y):
        return sft.pipeline_1f1b(lambda p, h: functional_call(stage, dict(zip(names, p)), (h,)), params, x, y,
                                 F.mse_loss, M, activation_shapes(world))

    ref_loss = F.mse_loss(model(x), y)
    ref = torch.autograd.grad(ref_loss, params)
    eager_loss, eager = step(params, x, y)
    fast = sft.compile(step, name="pipeline_grads")
    fast(params, x, y)  # traces (its sends run eagerly) and compiles
    copies = staged_copies(lambda: [fast(params, x, y) for _ in range(3)])
    loss, grads = fast(params, x, y)
    sf_loss, sf_eager = fast.run_eager_sf(params, x, y)
    # f32 rounding: the gradients are sums of M micro-batches' gradients, in order,
    # where PyTorch's one backward sums the whole batch in each matmul.
    for e, c, s, r in zip(eager, grads, sf_eager, ref):
        assert bitwise_equal(s, c), "compiled differs bitwise from symmflow's eager run of the .sf"
        torch.testing.assert_close(e, r, atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(c, r, atol=1e-6, rtol=1e-5)
    if rank == world - 1:
        assert bitwise_equal(sf_loss, loss)
        torch.testing.assert_close(loss, ref_loss.detach(), atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(eager_loss, ref_loss.detach(), atol=1e-6, rtol=1e-5)
    else:
        assert loss is None and eager_loss is None and sf_loss is None
    # Each micro-batch's activation forward and its gradient back, in the traced
    # program in 1F1B order: a forward receives from s-1 and sends to s+1, a
    # backward receives from s+1 and sends to s-1 (the first and last stage lack one side).
    first, last = rank == 0, rank == world - 1
    want = []
    for kind, _ in order_1f1b(world, rank, M):
        ends = (not first, not last) if kind == "F" else (not last, not first)
        want += [op for op, present in zip(("irecv_", "isend"), ends) if present]
    text = fast.sf_text(params, x, y)
    assert re.findall(r"c10d::(isend|irecv_)\(", text) == want
    head = fast.explain(params, x, y).splitlines()[0]
    assert head.endswith(" 0 copies (0 bytes)"), head
    assert fast.stats(params, x, y)["copies"] == 0
    assert copies == (0, 0), f"rank {rank}: {copies[0]} staged copies ({copies[1]} bytes) in 3 compiled runs"


@pytest.mark.parametrize("optimizer,momentum,lr", [("sgd", 0.9, 0.05), ("adam", 0.0, 0.005)])
def test_pipeline_training_equals_pytorch_on_the_whole_model(optimizer, momentum, lr, rank, world):
    steps = 3
    # f32 rounding as above. Adam divides each gradient by its own magnitude, so a
    # gradient near zero (summed in another order) moves its weight by up to lr times
    # its relative rounding error, and the loss after it moves with it (test_training.py).
    atol, loss_rtol = (1e-4, 1e-4) if optimizer == "adam" else (1e-6, 1e-5)
    ref_model = whole_model(world)
    opt = torch_optimizer(optimizer, ref_model.parameters(), lr, momentum)
    options = dict(lr=lr, micro_batches=M, activation_shape=activation_shapes(world), optimizer=optimizer,
                   momentum=momentum)
    model, eager_model = whole_model(world), whole_model(world)
    pp = sft.PipelineParallel(model[rank], F.mse_loss, **options)
    eager = sft.PipelineParallel(eager_model[rank], F.mse_loss, compile=False, **options)
    for s in range(steps):
        x, y = batch(seed=40 + 2 * s)
        eager.step(x, y)
        ref_loss = reference_step(ref_model, opt, x, y)
        loss = pp.step(x, y)
        if rank == world - 1:
            torch.testing.assert_close(loss, ref_loss, atol=1e-6, rtol=loss_rtol)
        for p, q in zip(model[rank].parameters(), ref_model[rank].parameters()):  # updated in place
            torch.testing.assert_close(p.detach(), q.detach(), atol=atol, rtol=1e-5)
    for p, q in zip(model[rank].parameters(), eager_model[rank].parameters()):
        torch.testing.assert_close(p.detach(), q.detach(), atol=atol, rtol=1e-5)
    assert pp._fn.programs == 1  # one program serves every step
    head = pp.explain(x, y).splitlines()[0]
    assert head.endswith(" 0 copies (0 bytes)"), head


def test_pipeline_needs_the_activation_shape_and_equal_micro_batches(rank, world):
    stage = torch.nn.Linear(4, 4)
    fn = lambda p, h: functional_call(stage, dict(zip(["weight", "bias"], p)), (h,))
    x = randn(6, 4, seed=1)
    with pytest.raises(ValueError, match=r"does not split into 4 equal micro-batches"):
        sft.pipeline_1f1b(fn, list(stage.parameters()), x, x, F.mse_loss, 4, (1, 4))
    if world > 1:
        with pytest.raises(ValueError, match=r"needs activation_shape"):
            sft.pipeline_1f1b(fn, list(stage.parameters()), x, x, F.mse_loss, 2)
