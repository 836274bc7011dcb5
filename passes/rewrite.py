"""Turn groups of a DataflowGraph into mhlo.fusion ops in the IR.

All fusions of one pass are built first by cloning from the untouched original
ops, then uses are redirected, then dead originals are erased and the block is
re-sorted topologically. Building before erasing lets one cheap op be copied into
several fusions.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from jaxlib.mlir import ir

from . import opinfo
from .capability import Backend
from .graph import DataflowGraph, reads_of


@dataclass
class Group:
    """Nodes to become one fusion. `copies` are cloned in and keep their original
    for other users; every other member is owned: the fusion takes its place."""
    members: set[int]
    copies: set[int] = field(default_factory=set)

    @property
    def owned(self) -> set[int]:
        return self.members - self.copies


def apply(graph: DataflowGraph, groups: list[Group], backend: Backend) -> list:
    """Rewrite `graph`'s function so each group is one mhlo.fusion; return them."""
    if not groups:
        return []
    built = [(g, *_build(graph, g, backend)) for g in groups]
    for _, fusion, outputs in built:
        for k, v in enumerate(outputs):
            v.replace_all_uses_with(fusion.results[k])
    owned = sorted({i for g in groups for i in g.owned}, reverse=True)
    for i in owned:
        graph.nodes[i].operation.erase()
    for i in sorted({i for g in groups for i in g.copies} - set(owned), reverse=True):
        op = graph.nodes[i].operation
        if not any(map(opinfo.is_read, op.results)):
            op.erase()
    topological_sort(graph.block)
    return [fusion for _, fusion, _ in built]


def _build(graph: DataflowGraph, group: Group, backend: Backend):
    members = sorted(group.members)
    outputs = graph.outputs(group.members, group.owned)
    inputs = _walk_order(graph, group.members, outputs)
    inner_ops = [o for i in members for o in _flat(graph.nodes[i])]
    loc = ir.Location.fused([o.location for o in inner_ops], context=graph.block.owner.context)
    with loc:
        fusion = ir.Operation.create(
            opinfo.FUSION, results=[v.type for v in outputs], operands=inputs, regions=1,
            ip=ir.InsertionPoint(graph.nodes[members[-1]].operation))
        body = fusion.regions[0].blocks.append(*[v.type for v in inputs])
        mapping = dict(zip(inputs, body.arguments))
        ip = ir.InsertionPoint(body)
        for i in members:
            clone_into(graph.nodes[i], mapping, ip)
        roots = [mapping[v] for v in outputs]
        ir.Operation.create("stablehlo.return", operands=roots, ip=ip)
        fusion.attributes["fusion_kind"] = _kind_attr(backend, roots)
    return fusion, outputs


def _walk_order(graph: DataflowGraph, group: set[int], outputs: list) -> list[ir.Value]:
    """The group's inputs in the order XLA's post-order walk of the unfused ops reaches
    them (from each output, operands first to last, depth first), not in program order.
    XLA's simplifier rewrites in that walk's order and some outcomes depend on it: f's
    constant (1 / 3) / sqrt(d) folds exactly, as under JAX's jit, only if the walk reaches
    log(d) before the loop that reads d (else it becomes 1 * rsqrt(d), one ulp off)."""
    order, seen = {}, set()
    for root in map(graph.producer, outputs):
        if root in seen:
            continue
        seen.add(root)
        stack = [iter(graph.reads[root])]
        while stack:
            v = next(stack[-1], None)
            if v is None:
                stack.pop()
            elif (p := graph.producer(v)) not in group:
                order.setdefault(v, None)
            elif p not in seen:
                seen.add(p)
                stack.append(iter(graph.reads[p]))
    return list(order) + [v for v in graph.inputs(group) if v not in order]


def _flat(op) -> list:
    return opinfo.fusion_body(op) if opinfo.name(op) == opinfo.FUSION else [op]


def copy_reducer(source, target) -> None:
    """Give `target` a copy of the reducer body of `source` (a plain one: it reads
    its own arguments only)."""
    body = source.regions[0].blocks[0]
    block = target.regions[0].blocks.append(*[a.type for a in body.arguments])
    mapping = dict(zip(body.arguments, block.arguments))
    ip = ir.InsertionPoint(block)
    for op in body.operations:
        clone_into(op, mapping, ip)


def clone_into(op, mapping: dict, ip: ir.InsertionPoint) -> None:
    """Clone `op` (a fusion: its body) at `ip`, reading `mapping`'s values and
    adding its results to `mapping`."""
    if opinfo.name(op) == opinfo.FUSION:
        body = op.operation.regions[0].blocks[0]
        inner = dict(mapping)
        inner.update((arg, mapping.get(v, v))
                     for arg, v in zip(body.arguments, op.operation.operands))
        for o in opinfo.fusion_body(op):
            clone_into(o, inner, ip)
        for r, v in zip(op.operation.results, opinfo.fusion_roots(op)):
            mapping[r] = inner[v]
        return
    new = op.operation.clone(ip=ip)
    for k, v in enumerate(op.operation.operands):
        if v in mapping:
            new.operands[k] = mapping[v]
    mapping.update(zip(op.operation.results, new.results))


def unfuse(fusion) -> None:
    """Put a fusion's ops back in its place: each runs as its own kernel again."""
    mapping = {}
    clone_into(fusion, mapping, ir.InsertionPoint(fusion))
    for r in fusion.results:
        r.replace_all_uses_with(mapping[r])
    fusion.erase()


def _kind_attr(backend: Backend, roots: list[ir.Value]) -> ir.Attribute:
    roots_are_reduce = any(not isinstance(v.owner, ir.Block)
                           and opinfo.name(v.owner) == opinfo.REDUCE for v in roots)
    return ir.Attribute.parse(f"#mhlo<fusion_kind {backend.fusion_kind(roots_are_reduce)}>")


def topological_sort(block: ir.Block) -> None:
    """Reorder `block` so every value is defined before use, moving as few ops as
    the original order allows (ties go to the earlier op)."""
    ops = list(block.operations)
    terminator, ops = ops[-1], ops[:-1]
    # by result: asking a value for its owner costs more than hashing it
    position = {r: k for k, op in enumerate(ops) for r in op.operation.results}
    waiting = [0] * len(ops)
    users = [[] for _ in ops]
    for k, op in enumerate(ops):
        producers = {position.get(v) for v in reads_of(op)} - {None}
        waiting[k] = len(producers)
        for p in producers:
            users[p].append(k)
    ready = [k for k, n in enumerate(waiting) if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for u in users[k]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, u)
    if order == list(range(len(ops))):
        return
    for k in order:
        ops[k].operation.move_before(terminator)
