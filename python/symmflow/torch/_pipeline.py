"""Pipeline training: one stage of a model per rank, micro-batches in 1F1B order
(docs/python.md, "Pipeline training").

    loss, grads = sft.pipeline_1f1b(stage_fn, params, x, y, loss_fn, micro_batches=4,
                                    activation_shape=(8, 64))

Rank s holds stage s of world_size() stages. Stage 0 feeds the micro-batches of
x to its stage_fn and sends the result on (sft.send); stage s > 0 receives its
input from stage s-1 (sft.recv); the last stage applies loss_fn against the
micro-batch of y. Backward runs through the same calls (_autograd.py): a
receive's backward sends the input's gradient back to s-1, a send's backward
receives the output's gradient from s+1. Each stage returns the gradients of
its own parameters, summed over the micro-batches.

The order is 1F1B (PipeDream-flush, Megatron's default): stage s runs
min(stages - 1 - s, M) warm-up forwards, then one forward and one backward in
turn, then the remaining backwards, so at most stages - s micro-batches'
activations are alive on stage s at once. Every rank runs different code; under
sft.compile each traces its own program (a branch on the rank is resolved at
trace time), and the compiler matches their sends and receives at load.
"""
import torch


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
    from . import rank, recv, send, world_size
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
    pending = {}  # micro-batch -> (what to differentiate, the receive's buffer or None)
    grads, loss = None, None
    for kind, m in order_1f1b(stages, stage, micro_batches):
        if kind == "F":
            buf = None
            if first:
                h = xs[m]
            else:
                # A receive's result hangs on buf in the autograd graph: differentiating
                # buf too makes autograd run the receive's backward (the send to s-1).
                buf = torch.zeros(_incoming_shape(activation_shape, stage), dtype=dtype, requires_grad=True)
                h = recv(buf, stage - 1)
            out = stage_fn(params, h)
            if last:
                objective = loss_fn(out, ys[m]) / micro_batches
                loss = objective.detach() if loss is None else loss + objective.detach()
            else:
                objective = send(out, stage + 1)  # the token; its backward receives out's gradient
            pending[m] = (objective, buf)
        else:
            objective, buf = pending.pop(m)
            g = torch.autograd.grad(objective, params + ([buf] if buf is not None else []))[:len(params)]
            grads = list(g) if grads is None else [a + b for a, b in zip(grads, g)]
    return loss, grads


class PipelineParallel:
    """This rank's stage of a model split over the ranks (stage s on rank s),
    trained on micro-batches in 1F1B order:

        pp = sft.PipelineParallel(stages[sft.rank()], F.mse_loss, lr=0.05, micro_batches=4,
                                  activation_shape=(8, 64))      # or optimizer="adam"
        loss = pp.step(x, y)   # the last stage: the batch's loss; the others: None

    step runs pipeline_1f1b on the stage module's own parameters and the
    optimizer's update of them in place, compiled by symmflow into one program
    per rank (compile=False runs the same step eagerly). Every rank passes the
    whole batch; stage 0 reads x, the last stage y."""

    def __init__(self, stage, loss_fn, lr, micro_batches, activation_shape=None, optimizer="sgd", momentum=0.0,
                 betas=(0.9, 0.999), eps=1e-8, compile=True, **compile_options):
        from . import _compile, _train
        self.opt = _train.Optimizer("PipelineParallel", optimizer, lr, momentum, betas, eps)
        self.stage, self.loss_fn = stage, loss_fn
        self.micro_batches, self.activation_shape = micro_batches, activation_shape
        named = list(stage.named_parameters())
        self.names = [n for n, _ in named]
        self.params = [p for _, p in named]
        self.state = self.opt.initial_state(self.params)
        self._fn = _compile.CompiledFunction(self._step, name="pipeline_step", **compile_options) \
            if compile else self._step

    def _stage_fn(self, params, h):
        from torch.nn.utils.stateless import functional_call
        return functional_call(self.stage, dict(zip(self.names, params)), (h,))

    def _step(self, params, state, x, y):
        loss, grads = pipeline_1f1b(self._stage_fn, params, x, y, self.loss_fn, self.micro_batches,
                                    self.activation_shape)
        self.opt.update_(params, grads, state)
        return loss

    def step(self, x, y):
        """One training step on the batch (x, y); returns its loss on the last stage, None on the others."""
        return self._fn(self.params, self.state, x, y)

    def explain(self, x, y):
        """This rank's compiled step's explain (what `symmflow run --explain` prints)."""
        return self._fn.explain(self.params, self.state, x, y)
