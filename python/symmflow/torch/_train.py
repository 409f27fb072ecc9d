"""Training steps: gradients all_reduced in buckets, optimizers that update the
caller's parameters in place, and DataParallel, which compiles a whole step
(forward, loss, torch.autograd.grad, the gradients' all_reduces, the update) into
one symmflow program (docs/python.md, "Training").

In the compiled program each bucket's all_reduce (and the cat and division
that prepare it) is moved up to right after backward produced its gradients
(_hoist.py), and the scheduler overlaps it with the rest of backward (the last
layer's gradients are ready first). Small gradients are bucketed: flattened into one buffer, all_reduced
once, split back into views, so a bias does not cost a collective of its own.
"""
import torch
from torch.nn.utils.stateless import functional_call

from . import _autograd, _compile

DEFAULT_BUCKET_BYTES = 1 << 18


def _buckets(grads, bucket_bytes):
    """Indices of grads in backward order (the last parameter's first, as backward
    produces them), grouped: consecutive gradients of one dtype whose bytes add up
    to at most bucket_bytes share a bucket; a bigger one is a bucket by itself."""
    out, cur, size = [], [], 0
    for i in reversed(range(len(grads))):
        g = grads[i]
        nbytes = g.numel() * g.element_size()
        if cur and (size + nbytes > bucket_bytes or g.dtype != grads[cur[0]].dtype):
            out.append(cur)
            cur, size = [], 0
        cur.append(i)
        size += nbytes
    if cur:
        out.append(cur)
    return out


def _reduce_bucket(grads, average, world, group):
    """One bucket's gradients all_reduced (divided by world first when averaging, as
    DistributedDataParallel): in one all_reduce_ on a flat buffer; returns the
    reduced gradients, views of that buffer (a gradient alone: itself, contiguous)."""
    from . import all_reduce_
    flat = grads[0].contiguous() if len(grads) == 1 else torch.cat([g.reshape(-1) for g in grads])
    if average:
        flat = flat / world  # functional: the compiled trace may move it up (_hoist.py)
    all_reduce_(flat, group=group)
    if len(grads) == 1:
        return [flat]
    out, at = [], 0
    for g in grads:
        out.append(flat[at:at + g.numel()].view(g.shape))
        at += g.numel()
    return out


def _world_of(group, what):
    from . import _group
    return _autograd.group_size(_group(group, what))


def all_reduce_gradients(grads, average=True, bucket_bytes=DEFAULT_BUCKET_BYTES, group="world"):
    """The gradients summed (or, with average=True, averaged) over the group's ranks,
    as a list in the order given, after backward. Gradients in one bucket (see
    _buckets) cross in one all_reduce; the returned tensors of a bucket are views of
    its buffer."""
    world = _world_of(group, "all_reduce_gradients")
    out = [None] * len(grads)
    for bucket in _buckets(list(grads), bucket_bytes):
        for i, r in zip(bucket, _reduce_bucket([grads[i] for i in bucket], average, world, group)):
            out[i] = r
    return out


@torch.no_grad()
def sgd_(params, grads, lr, momentum=0.0, momentum_buffers=None):
    """torch.optim.SGD's update (no weight decay, no dampening, not Nesterov), in
    place on params (and on momentum_buffers, zeros before the first step)."""
    if momentum:
        if momentum_buffers is None or len(momentum_buffers) != len(params):
            raise ValueError("sgd_: momentum needs one momentum buffer per parameter")
        for b, g in zip(momentum_buffers, grads):
            b.mul_(momentum).add_(g)
        grads = momentum_buffers
    for p, g in zip(params, grads):
        p.add_(g, alpha=-lr)


@torch.no_grad()
def adam_(params, grads, exp_avgs, exp_avg_sqs, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """torch.optim.Adam's update (no weight decay, not amsgrad), in place on params
    and on its state: exp_avgs and exp_avg_sqs (zeros before the first step) and
    step, a 0-dim float tensor counting the steps taken (a tensor, so that one
    compiled program serves every step)."""
    beta1, beta2 = betas
    step.add_(1)
    bias1 = 1 - torch.pow(beta1, step)
    bias2_sqrt = torch.sqrt(1 - torch.pow(beta2, step))
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).add_(g * g * (1 - beta2))
        p.sub_(m * (lr / bias1) / (v.sqrt() / bias2_sqrt + eps))


class Optimizer:
    """An optimizer's settings and the update the compiled training steps run
    (DataParallel, PipelineParallel): sgd_ (with momentum) or adam_, its state
    a flat list of tensors (a compiled function's argument)."""

    def __init__(self, what, optimizer, lr, momentum=0.0, betas=(0.9, 0.999), eps=1e-8):
        if optimizer not in ("sgd", "adam"):
            raise ValueError(f"{what}: optimizer must be \"sgd\" or \"adam\", got {optimizer!r}")
        self.optimizer, self.lr, self.momentum, self.betas, self.eps = optimizer, lr, momentum, betas, eps

    def initial_state(self, params):
        """Adam: each parameter's exp_avg and exp_avg_sq, then the step count; SGD
        with momentum: one buffer per parameter; plain SGD: none."""
        if self.optimizer == "adam":
            return [torch.zeros_like(p) for p in params for _ in (0, 1)] + [torch.zeros(())]
        if self.momentum:
            return [torch.zeros_like(p) for p in params]
        return []

    def update_(self, params, grads, state):
        if self.optimizer == "adam":
            n = len(params)
            adam_(params, grads, state[0:2 * n:2], state[1:2 * n:2], state[-1], self.lr, self.betas, self.eps)
        else:
            sgd_(params, grads, self.lr, self.momentum, state)


class TrainingStep:
    """What DataParallel and PipelineParallel share: a module's own parameter
    tensors, the optimizer's state, and a step (forward, backward, update, as the
    subclass's _step(params, state, x, y)) compiled by symmflow into one program
    per signature (compile=False: run eagerly)."""

    def __init__(self, name, module, optimizer, lr, momentum, betas, eps, compile, compile_options):
        self.opt = Optimizer(type(self).__name__, optimizer, lr, momentum, betas, eps)
        named = list(module.named_parameters())
        self.names = [n for n, _ in named]
        self.params = [p for _, p in named]
        self.module = module
        self.state = self.opt.initial_state(self.params)
        self._fn = _compile.CompiledFunction(self._step, name=name, **compile_options) \
            if compile else self._step

    def _call_module(self, params, x):
        return functional_call(self.module, dict(zip(self.names, params)), (x,))

    def step(self, x, y):
        """One training step on (x, y), the parameters updated in place; returns the loss (see the class)."""
        return self._fn(self.params, self.state, x, y)

    def explain(self, x, y):
        """This rank's compiled step's explain (what `symmflow run --explain` prints)."""
        return self._fn.explain(self.params, self.state, x, y)

    def stats(self, x, y):
        """This rank's compiled step's stats(): its copies ("copies", "copy_bytes", and by
        origin: "copies_staged" is the runtime's staged copies of the last step), buffers."""
        return self._fn.stats(self.params, self.state, x, y)


class DataParallel(TrainingStep):
    """The model replicated on every rank, trained on each rank's part of the batch:

        dp = sft.DataParallel(model, F.mse_loss, lr=0.05)   # or optimizer="adam"
        loss = dp.step(x, y)        # this rank's loss; model's parameters updated in place
        dp.explain(x, y), dp.stats(x, y)

    step runs forward, loss_fn(model(x), y), torch.autograd.grad, the gradients'
    all_reduce (averaged, bucketed: all_reduce_gradients) and the optimizer's update
    of model's own parameter tensors, compiled by symmflow into one program
    (compile=False runs the same step eagerly). The parameters are broadcast from
    rank 0 first, as DistributedDataParallel does."""

    def __init__(self, model, loss_fn, lr, optimizer="sgd", momentum=0.0, betas=(0.9, 0.999), eps=1e-8,
                 bucket_bytes=DEFAULT_BUCKET_BYTES, group="world", compile=True, **compile_options):
        from . import broadcast_
        super().__init__("data_parallel_step", model, optimizer, lr, momentum, betas, eps, compile, compile_options)
        self.model, self.loss_fn = model, loss_fn
        self.bucket_bytes, self.group = bucket_bytes, group
        with torch.no_grad():
            for p in self.params:
                broadcast_(p, 0, group)

    def _step(self, params, state, x, y):
        loss = self.loss_fn(self._call_module(params, x), y)
        grads = all_reduce_gradients(torch.autograd.grad(loss, params), True, self.bucket_bytes, self.group)
        self.opt.update_(params, grads, state)
        return loss.detach()
