"""Communication as early as the trace allows: a make_fx graph reordered so that
each collective (and the functional ops that only prepare its input) comes right
after what it needs, before unrelated compute.

Why: symmflow's scheduler (passes/schedule.h) starts a collective as soon as it
is ready but keeps compute in program order, and a trace's program order is the
order in which autograd's engine ran backward. The engine runs the node created
last first, so a gradient's all_reduce, whose preparation (the bucket's cat, the
division by the world size) was set up before the forward ran, is traced after
the whole of backward. Moved up, it starts while the rest of backward computes.

Only functional ops move, and only across nodes that write nothing and do not
communicate (no in-place or out= op, no other start, no wait): no read sees
another value, and the ranks keep issuing their communication in one order.
"""
import torch


def _schema_op(n):
    return n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)


def _writes(n):
    if not _schema_op(n):
        return False
    return any(a.alias_info is not None and a.alias_info.is_write for a in n.target._schema.arguments)


def _communicates(n):
    return _schema_op(n) and n.target.namespace in ("symmflow", "symm_mem")


def _is_start(n):
    return _communicates(n) and n.target._schema.name.split("::")[1] != "wait_tensor"


def _movable(n):
    if n.op != "call_function" or _communicates(n) or _writes(n):
        return False
    return _schema_op(n) or getattr(n.target, "__name__", "") == "getitem"


def _inputs(n):
    return [a for a in n.all_input_nodes]


def hoist_communication(gm):
    """Reorders gm.graph in place; returns whether anything moved."""
    nodes = list(gm.graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    # A wait is a barrier too: what a receive wrote is read through the buffer it
    # received into, not through the wait's result, so no data edge orders them.
    barriers = [i for i, n in enumerate(nodes) if _writes(n) or _communicates(n)]  # positions, ascending
    starts = [n for n in nodes if _is_start(n)]
    placed, order = set(), []
    chains = {}

    def chain(c):
        """(functional ancestors to move with c, in program order; the others it needs),
        asked first when c is the next barrier: the walk stops at placed nodes, so it
        covers only what lies between here and c."""
        if c not in chains:
            seen, move, need, stack = set(), [], [], list(_inputs(c))
            while stack:
                a = stack.pop()
                if a in seen or a in placed:
                    continue
                seen.add(a)
                if _movable(a):
                    move.append(a)
                    stack.extend(_inputs(a))
                else:
                    need.append(a)
            chains[c] = (sorted(move, key=pos.get), need)
        return chains[c]

    b = 0  # barriers[b] is the first barrier not yet placed
    k = 0  # starts[k] is the next collective to issue

    def place(n):
        nonlocal b
        placed.add(n)
        order.append(n)
        while b < len(barriers) and nodes[barriers[b]] in placed:
            b += 1

    for n in nodes:
        if n in placed:
            continue
        place(n)
        while k < len(starts):
            c = starts[k]
            if c in placed:
                k += 1
                continue
            # Every barrier before c is placed (c is the next one), and what c needs is.
            if b >= len(barriers) or barriers[b] != pos[c]:
                break
            move, need = chain(c)
            if not all(a in placed for a in need):
                break
            for a in move:
                if a not in placed:
                    place(a)
            place(c)
            k += 1
    moved = order != nodes
    if moved:
        cur = gm.graph._root
        for n in order:
            if cur.next is not n:
                cur.append(n)
            cur = n
        gm.graph.lint()
    return moved
