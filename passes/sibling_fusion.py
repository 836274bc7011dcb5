"""Sibling fusion: kernels that read the same operand become one kernel, so the
operand is read once.

Siblings must share a loop: the same output shape, or reductions over the same
input shape and dimensions. Sibling reductions become one variadic reduce, a
single-root fusion every backend compiles (one that compiles multi-output fusions
could take the reduces side by side, but need not); loop siblings need a backend
that compiles multi-output fusions (Backend.multi_output), else they stay split.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from . import legality
from . import opinfo
from .capability import reduce_root
from .cost import group_bytes
from .framework import FusionPass, PassContext
from .graph import DataflowGraph
from .rewrite import Group, clone_into


def reduce_signature(op):
    """(input shape, dimensions) of a reduce, or of a fusion whose results are
    exactly one reduce's; None for anything else."""
    op = reduce_root(op)
    if op is None:
        return None
    operation = op.operation
    return (str(operation.operands[0].type), str(operation.attributes["dimensions"]))


class SiblingFusion(FusionPass):
    name = "sibling-fusion"

    def plan(self, graph: DataflowGraph, ctx: PassContext) -> list[Group]:
        groups, claimed = [], set()
        signatures: dict[int, tuple | None] = {}  # reduce_signature per node: each pair asks
        for value, readers in graph.value_users.items():
            kernels = [u for u in dict.fromkeys(readers) if u not in claimed
                       and graph.name(u) != "stablehlo.constant"]
            if len(kernels) < 2 or legality.node_problem(graph, kernels[0], ctx.backend):
                continue
            group = {kernels[0]}
            for b in kernels[1:]:
                reason = self._problem(graph, group, b, value, ctx,
                                       [g.members for g in groups], signatures)
                if self.record(ctx, graph, [*sorted(group), b], reason,
                               f"shared operand read once ({opinfo.type_bytes(value.type)} bytes)"):
                    group.add(b)
            if len(group) > 1:
                groups.append(Group(group))
                claimed |= group
        return groups

    def _problem(self, graph: DataflowGraph, group: set[int], b: int, value: ir.Value,
                 ctx: PassContext, planned: list[set[int]], signatures: dict) -> str | None:
        reason = legality.node_problem(graph, b, ctx.backend)
        if reason:
            return reason
        a = min(group)
        if any(u in group for u in graph.users[b]) or any(b in graph.users[i] for i in group):
            return "one reads the other's result: producer and consumer, not siblings"
        for i in (a, b):
            if i not in signatures:
                signatures[i] = reduce_signature(graph.nodes[i])
        sig_a, sig_b = signatures[a], signatures[b]
        if (sig_a is None) != (sig_b is None):
            return "a reduction and a loop do not share a loop"
        if sig_a is not None and sig_a != sig_b:
            return "reductions over different input shapes or dimensions"
        if sig_a is None and _loop_shape(graph, a) != _loop_shape(graph, b):
            return "different loop shapes"
        candidate = group | {b}
        reason = legality.group_problem(graph, candidate, ctx.backend, self.max_operands(ctx),
                                        reduce_heroes=len(candidate) if sig_a else 1,
                                        planned=planned)
        if reason:
            return reason
        before = sum(group_bytes(graph, {i}) for i in candidate)
        if group_bytes(graph, candidate) >= before:
            return "modelled bytes would not shrink"
        return None

    def finish(self, fusions: list) -> None:
        for fusion in fusions:
            combine_reduce_roots(fusion)


def _loop_shape(graph: DataflowGraph, i: int) -> set[str]:
    return {str(r.type.shape) for r in graph.results(i)}


def combine_reduce_roots(fusion) -> None:
    """Replace the fusion's reduce roots (same input shape and dimensions) with one
    variadic reduce, so the fusion has a single root op."""
    body = fusion.operation.regions[0].blocks[0]
    terminator = list(body.operations)[-1]
    roots = opinfo.fusion_roots(fusion)
    reduces = list(dict.fromkeys(v.owner for v in roots))
    if (len(reduces) < 2 or any(isinstance(r, ir.Block) or opinfo.name(r) != opinfo.REDUCE
                                for r in reduces)
            or [v for r in reduces for v in r.operation.results] != roots
            or len({reduce_signature(r) for r in reduces}) > 1):
        return
    inputs, inits, accs, elems, result_types = [], [], [], [], []
    for r in reduces:
        n = len(r.operation.results)
        inputs += list(r.operation.operands)[:n]
        inits += list(r.operation.operands)[n:]
        args = list(r.operation.regions[0].blocks[0].arguments)
        accs += [a.type for a in args[:n]]
        elems += [a.type for a in args[n:]]
        result_types += [t.type for t in r.operation.results]
    with ir.Location.fused([r.location for r in reduces]):
        combined = ir.Operation.create(
            opinfo.REDUCE, results=result_types, operands=inputs + inits, regions=1,
            attributes={"dimensions": reduces[0].operation.attributes["dimensions"]},
            ip=ir.InsertionPoint(terminator))
        reducer = combined.regions[0].blocks.append(*accs, *elems)
        ip = ir.InsertionPoint(reducer)
        returns, offset = [], 0
        for r in reduces:
            n = len(r.operation.results)
            block = r.operation.regions[0].blocks[0]
            args = list(block.arguments)
            mapping = dict(zip(args[:n], reducer.arguments[offset:offset + n]))
            mapping.update(zip(args[n:], reducer.arguments[len(accs) + offset:
                                                           len(accs) + offset + n]))
            inner = list(block.operations)
            for op in inner[:-1]:
                clone_into(op, mapping, ip)
            returns += [mapping[v] for v in inner[-1].operands]
            offset += n
        ir.Operation.create("stablehlo.return", operands=returns, ip=ip)
    results = iter(combined.results)
    for r in reduces:
        for old in r.operation.results:
            old.replace_all_uses_with(next(results))
        r.operation.erase()
