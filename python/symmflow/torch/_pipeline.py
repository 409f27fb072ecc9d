"""Pipeline training: one stage of a model per rank, micro-batches in 1F1B order
(docs/python.md, "Pipeline training").

    loss, grads = sft.pipeline_1f1b(stage_fn, params, x, y, loss_fn, micro_batches=4,
                                    activation_shape=(8, 64))

Rank s holds stage s of world_size() stages. Stage 0 feeds the micro-batches of
x to its stage_fn; stage s > 0 receives its input from stage s-1; every stage
but the last sends its output on to s+1; the last applies loss_fn against the
micro-batch of y. Backward, per micro-batch: the last stage differentiates its
loss, the others receive their output's gradient from s+1 and differentiate
the output with it (torch.autograd.grad's grad_outputs); every stage but the
first sends its input's gradient back to s-1. Each stage returns the gradients
of its own parameters, summed over the micro-batches.

The order is 1F1B (PipeDream-flush, Megatron's default): stage s runs
min(stages - 1 - s, M) warm-up forwards, then one forward and one backward in
turn, then the remaining backwards, so at most stages - s micro-batches'
activations are alive on stage s at once. Every rank runs different code; under
sft.compile each traces its own program (a branch on the rank is resolved at
trace time), and the compiler matches their sends and receives at load.

Why the Work API (sft.isend / sft.irecv) and not the differentiable sft.send:
sft.send waits for its message to leave, and in 1F1B's steady state stage s
sends micro-batch m's activation to s+1 while s+1 sends micro-batch i's gradient
back to s. A message larger than an eager slot (4 KiB) waits for its receive
to be posted, so both ranks would wait for each other (observed: the runtime's
deadlock error at 8 KiB). Here no rank waits for a send until the end of the
pass; a rank only ever waits for a receive, and a receive depends only on
earlier steps of the schedule, so every wait completes (a rank blocked in a
wait drives its own sends in flight). The compiler moves each wait as late and
each post as early as the data allow (DESIGN 3, schedule) all the same.
"""
import torch

from . import _train


def order_1f1b(stages, stage, micro_batches):
    """Stage `stage`'s steps, ("F", m) and ("B", m), in 1F1B order."""
    warm = min(stages - 1 - stage, micro_batches)
    steps = [("F", m) for m in range(warm)]
    for i in range(micro_batches - warm):
        steps += [("F", warm + i), ("B", i)]
    return steps + [("B", m) for m in range(micro_batches - warm, micro_batches)]


def _incoming_shape(activation_shape, stage):
    """The shape stage receives: one shape for every boundary, or a list of
    stages - 1 shapes (boundary s-1 -> s is entry s-1)."""
    if activation_shape and isinstance(activation_shape[0], (tuple, list)):
        return tuple(activation_shape[stage - 1])
    return tuple(activation_shape)


def _received(shape, dtype, src):
    """A new tensor: what rank src sends next (posted and waited for here)."""
    from . import irecv
    buf = torch.empty(shape, dtype=dtype)
    irecv(buf, src).wait()
    return buf


def pipeline_1f1b(stage_fn, params, x, y, loss_fn, micro_batches, activation_shape=None):
    """One 1F1B pass of a pipeline, this rank's stage: returns (loss, grads).

    stage_fn(params, h) is this rank's stage (params: its list of parameters,
    which require grad). x and y are the whole batch, split on dim 0 into
    micro_batches equal parts; only stage 0 reads x, only the last stage y.
    activation_shape is the shape of one micro-batch's activation between two
    stages (a list of stages - 1 shapes when they differ); needed when there
    is more than one stage. The loss differentiated is the mean of the
    micro-batches' loss_fn (the whole batch's, for a mean-reduced loss):
    `loss` is it on the last stage, None on the others; `grads` are this
    stage's parameters' gradients of it, summed over the micro-batches in
    order (so not bitwise those of one backward over the whole batch).
    Stage s is rank s of "world"."""
    from . import isend, rank, world_size
    stages, stage = world_size(), rank()
    first, last = stage == 0, stage == stages - 1
    if stages > 1 and activation_shape is None:
        raise ValueError("pipeline_1f1b: a pipeline of more than one stage needs activation_shape, the shape of "
                         "one micro-batch's activation between two stages")
    if x.shape[0] % micro_batches or y.shape[0] % micro_batches:
        raise ValueError(f"pipeline_1f1b: the batch (x {tuple(x.shape)}, y {tuple(y.shape)}) does not split into "
                         f"{micro_batches} equal micro-batches on dim 0")
    params = list(params)
    xs, ys = x.chunk(micro_batches), y.chunk(micro_batches)
    dtype = params[0].dtype if params else x.dtype
    alive = {}   # micro-batch -> (its input h, its output or loss): what backward differentiates
    sends = []   # (Work, tensor): waited for at the end (see the module's comment)
    grads, loss = None, None
    for kind, m in order_1f1b(stages, stage, micro_batches):
        if kind == "F":
            h = xs[m] if first else \
                _received(_incoming_shape(activation_shape, stage), dtype, stage - 1).requires_grad_()
            out = stage_fn(params, h)
            if last:
                out = loss_fn(out, ys[m]) / micro_batches
                loss = out.detach() if loss is None else loss + out.detach()
            else:
                sent = out.detach()
                sends.append((isend(sent, stage + 1), sent))
            alive[m] = (h, out)
        else:
            h, out = alive.pop(m)
            grad_out = None if last else _received(out.shape, out.dtype, stage + 1)
            g = torch.autograd.grad(out, params + ([] if first else [h]), grad_outputs=grad_out)
            if not first:
                sends.append((isend(g[-1], stage - 1), g[-1]))
            g = g[:len(params)]
            grads = list(g) if grads is None else [a + b for a, b in zip(grads, g)]
    for work, _ in sends:
        work.wait()
    return loss, grads


class PipelineParallel(_train.TrainingStep):
    """This rank's stage of a model split over the ranks (stage s on rank s),
    trained on micro-batches in 1F1B order:

        pp = sft.PipelineParallel(stages[sft.rank()], F.mse_loss, lr=0.05, micro_batches=4,
                                  activation_shape=(8, 64))      # or optimizer="adam"
        loss = pp.step(x, y)   # the last stage: the batch's loss; the others: None
        pp.explain(x, y), pp.stats(x, y)    # this rank's program

    step runs pipeline_1f1b on the stage module's own parameters and the
    optimizer's update of them in place, compiled by symmflow into one program
    per rank (compile=False runs the same step eagerly). Every rank passes the
    whole batch; stage 0 reads x, the last stage y."""

    def __init__(self, stage, loss_fn, lr, micro_batches, activation_shape=None, optimizer="sgd", momentum=0.0,
                 betas=(0.9, 0.999), eps=1e-8, compile=True, **compile_options):
        super().__init__("pipeline_step", stage, optimizer, lr, momentum, betas, eps, compile, compile_options)
        self.loss_fn, self.micro_batches, self.activation_shape = loss_fn, micro_batches, activation_shape

    def _step(self, params, state, x, y):
        loss, grads = pipeline_1f1b(self._call_module, params, x, y, self.loss_fn, self.micro_batches,
                                    self.activation_shape)
        self.opt.update_(params, grads, state)
        return loss
