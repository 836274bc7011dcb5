"""Producer-consumer (multi-output) fusion: fuse a producer into a consumer and
keep the producer's value as an extra output for its other users.

The consumer then reads the producer's value from registers instead of memory.
Only backends that compile multi-output fusions (Backend.multi_output) get these;
elsewhere every candidate is recorded as refused.
"""
from __future__ import annotations

from . import legality
from .cost import group_bytes
from .framework import FusionPass, PassContext
from .graph import DataflowGraph
from .rewrite import Group


class ProducerConsumerFusion(FusionPass):
    name = "producer-consumer-fusion"

    def plan(self, graph: DataflowGraph, ctx: PassContext) -> list[Group]:
        groups, claimed = [], set()
        for c in range(len(graph)):
            if c in claimed or legality.node_problem(graph, c, ctx.backend):
                continue
            for p in graph.operands[c]:
                if (p in claimed or graph.name(p) == "stablehlo.constant"
                        or not (graph.is_returned(p) or len(graph.users[p]) > 1)):
                    continue  # single-user producers are instruction fusion's
                reason = self._problem(graph, p, c, ctx, [g.members for g in groups])
                if self.record(ctx, graph, [p, c], reason, "producer kept as an extra output"):
                    groups.append(Group({p, c}))
                    claimed |= {p, c}
                    break
        return groups

    def _problem(self, graph: DataflowGraph, p: int, c: int, ctx: PassContext,
                 planned: list[set[int]]) -> str | None:
        reason = (legality.node_problem(graph, p, ctx.backend)
                  or legality.reuse_problem(graph, p, {c})
                  or legality.group_problem(graph, {p, c}, ctx.backend, self.max_operands(ctx),
                                            planned=planned))
        if reason:
            return reason
        before = group_bytes(graph, {p}) + group_bytes(graph, {c})
        if group_bytes(graph, {p, c}) >= before:
            return "modelled bytes would not shrink"
        return None
