"""Backward formulas of the communication ops (DESIGN.md section 9, "Autograd").

The convention is DESIGN's: the loss being differentiated is the sum of the
ranks' losses, so

- a sum all_reduce's backward is a sum all_reduce of the gradient (an avg one's
  an avg all_reduce); max/min have none (an error says so);
- all_gather and (sum) reduce_scatter are each other's backward;
- all_to_all (equal splits) is its own backward;
- broadcast's backward is a reduce to the source: the source's input gets the
  sum of every rank's gradient, the other ranks' inputs (overwritten) get zero;
- a send's backward is the matching receive and a receive's the matching send
  (sft.send / sft.recv).

Each is a torch.autograd.Function whose forward and backward call symmflow's
torch ops, so make_fx (which records below autograd) traces a training step's
backward communication as ops like the forward's: `torch.autograd.grad` inside
a compiled function gives one program with both.
"""
import torch

from .. import _C

_c10d = torch.ops.symmflow


def group_size(group):
    return _C.world_size() if group == "world" else _C.group_size(group)


def _all_reduce(t, op, group):
    return _c10d.wait_tensor(_c10d.all_reduce(t.contiguous(), op, group))


def _grad_reduce_op(op, what):
    if op in ("sum", "avg"):
        return op
    raise _C.Error(f"{what}: the backward of a {op!r} reduction is not defined (only \"sum\" and \"avg\" "
                   f"reductions are differentiable); compute it under torch.no_grad() or detach its input")


class AllReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, op, group):
        ctx.op, ctx.group = op, group
        return _all_reduce(t, op, group)

    @staticmethod
    def backward(ctx, g):
        return _all_reduce(g, _grad_reduce_op(ctx.op, "all_reduce"), ctx.group), None, None


def _in_place(ctx, collective, t, arg, group):
    """The forward of an in-place collective: t written, and marked so for autograd."""
    collective(t, arg, group)
    ctx.mark_dirty(t)
    return t


class AllReduceInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, op, group):
        ctx.op, ctx.group = op, group
        return _in_place(ctx, _c10d.all_reduce_, t, op, group)

    @staticmethod
    def backward(ctx, g):
        return _all_reduce(g, _grad_reduce_op(ctx.op, "all_reduce_"), ctx.group), None, None


def _all_gather(t, group):
    return _c10d.wait_tensor(_c10d.all_gather_into_tensor(t.contiguous(), group_size(group), group))


def _reduce_scatter(t, op, group):
    return _c10d.wait_tensor(_c10d.reduce_scatter_tensor(t.contiguous(), op, group_size(group), group))


class AllGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, group):
        ctx.group = group
        return _all_gather(t, group)

    @staticmethod
    def backward(ctx, g):
        return _reduce_scatter(g, "sum", ctx.group), None


class ReduceScatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, op, group):
        ctx.op, ctx.group = op, group
        return _reduce_scatter(t, op, group)

    @staticmethod
    def backward(ctx, g):
        op = _grad_reduce_op(ctx.op, "reduce_scatter")
        full = _all_gather(g, ctx.group)
        return (full if op == "sum" else full / group_size(ctx.group)), None, None


def _all_to_all(t, group):
    return _c10d.wait_tensor(_c10d.all_to_all_single(t.contiguous(), [], [], group))


class AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, group):
        ctx.group = group
        return _all_to_all(t, group)

    @staticmethod
    def backward(ctx, g):
        # Part r of this rank's output came from rank r's part (this rank's index):
        # sending the gradient's parts back the same way returns each where it came from.
        return _all_to_all(g, ctx.group), None


class BroadcastInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, src, group):
        ctx.src, ctx.group = src, group
        return _in_place(ctx, _c10d.broadcast_, t, src, group)

    @staticmethod
    def backward(ctx, g):
        # A reduce to the source: symmflow has no rooted reduce, so every rank gets
        # the sum and only the source keeps it (the others' inputs were overwritten).
        # Scaled by 1 or 0, not chosen: every rank then traces the same program.
        total = _all_reduce(g, "sum", ctx.group)
        return total * float(_C.rank() == ctx.src), None, None


def _send(t, dst, tag, group):
    _c10d.wait_tensor(_c10d.isend(t.contiguous(), dst, tag, group))


def _recv(shape, dtype, src, tag, group):
    buf = torch.empty(shape, dtype=dtype)
    return _c10d.wait_tensor(_c10d.irecv_(buf, src, tag, group))


class Send(torch.autograd.Function):
    """Returns a 0-dim zero (the send's token): the sending rank differentiates it
    (or adds it to its loss), and its backward receives the gradient of what it sent."""

    @staticmethod
    def forward(ctx, t, dst, tag, group):
        ctx.dst, ctx.tag, ctx.group = dst, tag, group
        ctx.shape, ctx.dtype = t.shape, t.dtype
        _send(t, dst, tag, group)
        return torch.zeros((), dtype=t.dtype)

    @staticmethod
    def backward(ctx, _token_grad):
        return _recv(ctx.shape, ctx.dtype, ctx.dst, ctx.tag, ctx.group), None, None, None


class Recv(torch.autograd.Function):
    """The tensor received (a fresh one shaped like buf); its backward sends the
    gradient back to the sender. buf's own values are not read (a receive
    overwrites), so its gradient is zero; it is what the result hangs on in the
    autograd graph, a receive having no input of its own."""

    @staticmethod
    def forward(ctx, buf, src, tag, group):
        ctx.src, ctx.tag, ctx.group = src, tag, group
        return _recv(buf.shape, buf.dtype, src, tag, group)

    @staticmethod
    def backward(ctx, g):
        _send(g, ctx.src, ctx.tag, ctx.group)
        return torch.zeros_like(g), None, None, None


class BatchIsendIrecv(torch.autograd.Function):
    """batch_isend_irecv (the Work API) when a sent tensor requires grad: the
    receive buffers are written in place (marked dirty, so each buffer's later
    uses hang on this node), and the backward is the same batch reversed: each
    received buffer's gradient is sent back to the rank it came from, each sent
    tensor's gradient is received from the rank it went to (same peers, same
    tags; every rank runs its reversed batch where it ran the forward one, so
    they match as the forward's did). A buffer's own gradient is zero: the
    receive overwrote it. `handles` gets the op's handles, for the Work
    objects, which wait outside this node."""

    @staticmethod
    def forward(ctx, meta, handles, *tensors):
        op_types, peers, tags, group = meta
        ctx.meta = meta
        ctx.shapes = [(t.shape, t.dtype) for t in tensors]
        handles.extend(_c10d.batch_isend_irecv(op_types, peers, tags, list(tensors), group))
        received = [t for o, t in zip(op_types, tensors) if o == "irecv"]
        ctx.mark_dirty(*received)
        return tuple(received)

    @staticmethod
    def backward(ctx, *grads):
        op_types, peers, tags, group = ctx.meta
        incoming = iter(grads)
        reversed_types, bufs = [], []
        for o, (shape, dtype) in zip(op_types, ctx.shapes):
            if o == "irecv":
                g = next(incoming)
                reversed_types.append("isend")
                bufs.append(torch.zeros(shape, dtype=dtype) if g is None else g.contiguous())
            else:
                reversed_types.append("irecv")
                bufs.append(torch.empty(shape, dtype=dtype))
        done = [_c10d.wait_tensor(h) for h in _c10d.batch_isend_irecv(reversed_types, peers, tags, bufs, group)]
        return (None, None) + tuple(d if o == "isend" else None for o, d in zip(op_types, done))
