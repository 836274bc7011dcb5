"""Fusion merger: merge a loop fusion into all of its users, or into none.

Merging into every user removes the fusion's output from memory entirely (it is
recomputed in each user instead); merging into only some would keep the write
and add the recomputation. XLA's FusionMerger makes the same all-or-none choice.
We merge only when the modelled bytes moved do not grow, and the modelled time
(bytes, flops recomputed in every user, kernel launches) does not grow either.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from . import legality
from . import opinfo
from .cost import group_bytes, node_flops, seconds
from .framework import FusionPass, PassContext
from .graph import DataflowGraph
from .rewrite import Group


class FusionMerger(FusionPass):
    name = "fusion-merger"

    def run(self, module: ir.Module, ctx: PassContext) -> None:
        # (fusion, its users) -> why they cannot merge, kept across rounds while no
        # round rewrites them: each round sees a handful of merges, and re-checking
        # every unchanged pair made the merger quadratic (random.f's loops: 11 rounds)
        self._refused: dict = {}
        try:
            super().run(module, ctx)
        finally:
            self._refused = {}

    def plan(self, graph: DataflowGraph, ctx: PassContext) -> list[Group]:
        groups, claimed = [], set()
        for f, op in enumerate(graph.nodes):
            if opinfo.name(op) != opinfo.FUSION or "kLoop" not in str(
                    op.operation.attributes["fusion_kind"]):
                continue
            users = graph.users[f]
            if claimed & ({f} | set(users)):
                continue  # one merge per node per round; the next round sees the result
            key = tuple(graph.nodes[i].operation for i in (f, *users))
            reason = self._refused.get(key) or self._problem(graph, f, users, ctx)
            if self.record(ctx, graph, [f, *users], reason, "modelled bytes do not grow"):
                groups += [Group({f, u}, copies={f}) for u in users]
                claimed |= {f, *users}
            else:
                self._refused[key] = reason
        # the groups' ops are erased when applied; an op made later may take the
        # address (an MLIR operation's hash) of one, so what was said of them goes
        rewritten = {graph.nodes[i].operation for g in groups for i in g.members}
        self._refused = {key: reason for key, reason in self._refused.items()
                         if rewritten.isdisjoint(key)}
        return groups

    def _problem(self, graph: DataflowGraph, f: int, users: list[int],
                 ctx: PassContext) -> str | None:
        if graph.is_returned(f):
            return "its result is a function result: it must be written anyway"
        if not users:
            return "no users"
        for u in users:
            reason = (legality.reuse_problem(graph, f, {u})
                      or legality.node_problem(graph, u, ctx.backend))
            if reason:
                return f"cannot merge into {graph.name(u)}: {reason}"
        # the cost model before the rest of the legality checks, which look at each
        # merged group whole: most merges it refuses are legal
        reason = self._cost_problem(graph, f, users, ctx)
        if reason:
            return reason
        for u in users:
            reason = legality.group_problem(graph, {f, u}, ctx.backend,
                                            self.max_operands(ctx), owned={u})
            if reason:
                return f"cannot merge into {graph.name(u)}: {reason}"
        return None

    @staticmethod
    def _cost_problem(graph: DataflowGraph, f: int, users: list[int],
                      ctx: PassContext) -> str | None:
        before = group_bytes(graph, {f}) + sum(group_bytes(graph, {u}) for u in users)
        after = sum(group_bytes(graph, {f, u}, owned={u}) for u in users)
        if after > before:
            return f"modelled bytes would grow from {before} to {after}"
        # fewer bytes can still cost more time when f's work is done once per user
        flops = [node_flops(graph, i) for i in (f, *users)]
        params = ctx.backend.cost
        t_before = seconds(params, before, sum(flops), 1 + len(users))
        t_after = seconds(params, after, len(users) * flops[0] + sum(flops[1:]), len(users))
        if t_after > t_before:
            return (f"recomputing it in {len(users)} users costs more than the "
                    f"{before - after} bytes saved ({t_before * 1e6:.1f} -> {t_after * 1e6:.1f} us)")
        return None
