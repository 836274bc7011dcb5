"""XLA's fusion legality rules, shared by the four passes.

Each check returns the reason a candidate is illegal, or None: the passes record
that reason, so a refused fusion is as explainable as a performed one.
"""
from __future__ import annotations

from . import ops as opinfo
from .capability import Backend, reduce_root, select_problem
from .graph import Graph


def reduces_in(graph: Graph, i: int) -> list:
    op = graph.nodes[i]
    if opinfo.name(op) == opinfo.FUSION:
        return [o for o in opinfo.fusion_body(op) if opinfo.name(o) == opinfo.REDUCE]
    return [op] if opinfo.name(op) == opinfo.REDUCE else []


def node_problem(graph: Graph, i: int, backend: Backend) -> str | None:
    """Why node `i` can join no fusion on `backend`."""
    op = graph.nodes[i]
    if opinfo.name(op) == opinfo.FUSION:
        return None
    if i in graph.reserved:
        return graph.reserved[i]
    if graph.constant[i] and (opinfo.name(op) in opinfo.CHEAP_ELEMENTWISE
                              or opinfo.name(op) in opinfo.EXPENSIVE_ELEMENTWISE):
        # fused, XLA folds it inside the fusion, then maybe the op reading it
        # (a select on a constant predicate), leaving a fused parameter unread
        return "arithmetic on constants: left to XLA's constant folding"
    return backend.problem_given(op, graph.unfusible[i])


def group_problem(graph: Graph, group: set[int], backend: Backend, max_operands: int,
                  owned: set[int] | None = None, reduce_heroes: int = 1,
                  planned: list[set[int]] = ()) -> str | None:
    """Why `group` cannot be one kernel. `owned` members hand their values to
    outside users; the others are copies (duplicated cheap ops). `planned`: the
    groups this round already chose, each to become one kernel."""
    owned = group if owned is None else owned
    for i in group:
        reason = node_problem(graph, i, backend)
        if reason:
            return reason
    if len({graph.epoch[i] for i in group}) > 1:
        return "a side-effecting op lies between these ops"
    reduces = [r for i in group for r in reduces_in(graph, i)]
    if len(reduces) > reduce_heroes:
        return f"{len(reduces)} reductions: at most {reduce_heroes} reduction hero per fusion"
    if reduce_heroes > 1 and len(reduces) > 1:  # sibling reduces become one variadic reduce
        reason = backend.variadic_reduce_problem([r.type for op in reduces
                                                  for r in op.operation.results])
        if reason:
            return reason
    if owned == group and len(group) > 1 and graph.creates_cycle(group, planned):
        return "would create a cycle: a path leaves the group and comes back"
    if any(not graph.users[i] and not graph.is_returned(i) for i in owned):
        return "dead code: XLA would drop it and leave a fused parameter unread"
    outputs, inputs = graph.outputs(group, owned), graph.inputs(group)
    if not inputs:  # fused, it hides constants from passes that need them (reduce_window)
        return "a constant expression: left to XLA's constant folding"
    n_io = len(inputs) + len(outputs)
    if n_io > max_operands:
        return f"{n_io} operands+outputs exceed the bound of {max_operands}"
    if len(outputs) > 1 and not backend.multi_output and not _reduce_outputs(
            graph, outputs, sibling_reduces=reduce_heroes > 1):
        return (f"{len(outputs)} outputs: {backend.name} compiles multi-output fusions "
                "only as one variadic reduce")
    if not backend.layout_sensitive_ops:
        reason = _layout_problem(graph, group)
        if reason:
            return reason
    if not backend.reduce_inside_loop and reduces and _reduce_feeds_group(graph, group):
        return f"a reduce may only be a fusion root on {backend.name}"
    return None


def _fused_reads(graph: Graph, i: int) -> list:
    """(op, operands) for the ops member `i` puts in a fusion, each operand the
    value read from outside the member (None for one computed inside it)."""
    op = graph.nodes[i]
    if opinfo.name(op) != opinfo.FUSION:
        return [(op, list(op.operation.operands))]
    body = op.operation.regions[0].blocks[0]
    outer = dict(zip(body.arguments, op.operation.operands))
    return [(inner, [outer.get(v) for v in inner.operation.operands])
            for inner in opinfo.fusion_body(op)]


def _layout_problem(graph: Graph, group: set[int]) -> str | None:
    reads = [r for i in group for r in _fused_reads(graph, i)]
    for op, operands in reads:
        outside = [v is not None and graph.producer(v) not in group for v in operands]
        reason = select_problem(op, outside)
        if reason:
            return reason
    return None


def _reduce_outputs(graph: Graph, outputs, sibling_reduces: bool) -> bool:
    """Whether the outputs are one reduce's results (or, for sibling reductions
    to be combined, several reduces' results)."""
    owners = {graph.producer(v) for v in outputs}
    return (all(reduce_root(graph.nodes[i]) is not None for i in owners)
            and (len(owners) == 1 or sibling_reduces))


def _reduce_feeds_group(graph: Graph, group: set[int]) -> bool:
    return any(u in group for i in group if reduces_in(graph, i) for u in graph.users[i])


def reuse_problem(graph: Graph, producer: int, consumers: set[int]) -> str | None:
    """An expensive producer must not be recomputed for every read of a consumer
    that reads each of its elements more than once (a broadcast, say)."""
    op = graph.nodes[producer]
    if not opinfo.is_expensive(op):
        return None
    produced = set(graph.results(producer))
    for c in consumers:
        user = graph.nodes[c].operation
        for k, v in enumerate(user.operands):
            if v in produced and opinfo.reuses_operand(user, k):
                return (f"expensive {opinfo.name(op)} would be recomputed: "
                        f"{user.name} reads each element more than once")
    return None
