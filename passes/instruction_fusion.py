"""Instruction fusion: pull producers into their consumers, walking from the
function's results backwards as XLA's InstructionFusion does.

A cheap producer (elementwise, broadcast, slice, ...) is copied into each consumer
fusion that wants it; recomputing it costs less than writing and re-reading it.
An expensive one (exp, divide, reduce, ...) is fused only where it is not
duplicated: all its users are in this fusion and none of them reads an element of
it more than once.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from . import legality
from . import opinfo
from .cost import read_bytes
from .framework import FusionPass, PassContext
from .graph import DataflowGraph
from .rewrite import Group


class InstructionFusion(FusionPass):
    name = "instruction-fusion"
    repeat = False

    def plan(self, graph: DataflowGraph, ctx: PassContext) -> list[Group]:
        groups: list[Group] = []
        root_of: dict[int, Group] = {}  # owned member -> its group
        read: set[int] = set()  # nodes whose value a planned fusion reads from memory
        dead: set[int] = set()  # nodes every reader computes inside its own fusion
        chains: dict[str, list[int]] = {}
        for i, reason in graph.reserved.items():
            chains.setdefault(reason, []).append(i)
        for reason, nodes in chains.items():
            self.record(ctx, graph, sorted(nodes), reason)
        for root in reversed(range(len(graph))):
            if (graph.name(root) == "stablehlo.constant"
                    or self._covered(graph, root, root_of, read, dead)
                    or not (graph.users[root] or graph.is_returned(root))
                    or legality.node_problem(graph, root, ctx.backend)):
                continue
            group = self._grow(graph, root, read, ctx)
            if len(group.members) > 1:
                reason = (self._lone_op(graph, group.members)
                          or ctx.backend.leave_unfused(graph, root, group.members))
                if reason:
                    self.record(ctx, graph, sorted(group.members), reason)
                    continue
                groups.append(group)
                root_of.update((i, group) for i in group.owned)
                read |= {graph.producer(v) for v in graph.inputs(group.members)}
        return groups

    @staticmethod
    def _lone_op(graph: DataflowGraph, members: set[int]) -> str | None:
        """One op with only constants fused into it stays plain: XLA gives a lone op
        a kernel of its own alike, and its simplifiers, which run before that, see it
        (an `add(i, 1)` fused hid fori_loop's counter from XLA's while-loop
        simplifier, which merges it with the loop's own: a kernel more per step). A
        reduce keeps its init constant: XLA CPU emits a plain reduce differently."""
        ops = [i for i in members if graph.name(i) != "stablehlo.constant"]
        if len(ops) == 1 and graph.name(ops[0]) != opinfo.REDUCE:
            return (f"one {graph.name(ops[0])} with constants: XLA makes the same kernel "
                    "of it, after its simplifiers have seen the op")
        return None

    @staticmethod
    def _covered(graph: DataflowGraph, n: int, root_of: dict, read: set[int],
                 dead: set[int]) -> bool:
        """Whether every reader of `n` computes it inside its own fusion already, or
        dies itself (its copies then hold `n`, or `n` would be in `read`), so the
        original dies and needs no fusion of its own; a covered `n` joins `dead`."""
        covered = (n not in read and not graph.is_returned(n) and bool(graph.users[n])
                   and all(u in dead or u in root_of and n in root_of[u].members
                           for u in graph.users[n]))
        if covered:
            dead.add(n)
        return covered

    def _grow(self, graph: DataflowGraph, root: int, read: set[int], ctx: PassContext) -> Group:
        grown = legality.GrowingGroup(graph, root, ctx.backend, self.max_operands(ctx))
        # users come after producers, so visiting candidates from the last one
        # back sees every user that will join before the producer itself
        candidates = set(graph.operands[root])
        waiting: dict[int, list[int]] = {}  # a select's predicate -> its on_true operands
        while candidates:
            p = max(candidates)
            candidates.remove(p)
            predicate = _pending_predicate(graph, grown, p, candidates)
            if predicate is not None:
                waiting.setdefault(predicate, []).append(p)
                continue
            candidates.update(waiting.pop(p, ()))
            # sole: every reader is an owned member, so the original dies after fusion
            sole = (not graph.is_returned(p) and p not in read
                    and all(u in grown.owned for u in graph.users[p]))
            reason = self._problem(graph, grown, sole, p, ctx)
            if self.record(ctx, graph, [p, root], reason,
                           "all users in this fusion" if sole else "cheap producer copied"):
                grown.add(p, owned=sole)
                candidates.update(graph.operands[p])
        return Group(grown.members, copies=grown.members - grown.owned)

    @staticmethod
    def _written_anyway(graph: DataflowGraph, p: int, ctx: PassContext) -> bool:
        return graph.is_returned(p) or any(
            legality.node_problem(graph, u, ctx.backend) for u in graph.users[p])

    def _problem(self, graph: DataflowGraph, grown: legality.GrowingGroup, sole: bool, p: int,
                 ctx: PassContext) -> str | None:
        if not sole and opinfo.is_expensive(graph.nodes[p]):
            return (f"expensive {graph.name(p)} has users outside this fusion: "
                    "fusing would duplicate it")
        if not sole:
            # the original stays for other readers: a copy pays if its operands cost
            # less to read than its result; as much, only if the original may die
            # (no reader that no fusion can hold, such as a dot, keeps it written)
            extra = sum(read_bytes(graph, v) for v in graph.reads[p] if v not in grown.inputs)
            result = sum(opinfo.type_bytes(r.type) for r in graph.results(p))
            if (extra > result and not _effectively_unary(graph, p)
                    or extra == result and self._written_anyway(graph, p, ctx)):
                return (f"a copy would read {extra} bytes of operands instead of its "
                        f"{result}-byte result, which stays written for other users")
        consumers = {u for u in graph.users[p] if u in grown.members}
        return legality.reuse_problem(graph, p, consumers) or grown.problem(p, owned=sole)


def _pending_predicate(graph: DataflowGraph, grown: legality.GrowingGroup, p: int,
                       candidates: set[int]) -> int | None:
    """The predicate of a fused select that reads `p` as its on_true, while that
    predicate is still a candidate: whether `p` may join depends on whether it does
    (capability.select_problem), so `p` waits for it, as XLA reconsiders a fusion's
    operands after each producer it fuses."""
    for u in graph.users[p]:
        if u in grown.members and graph.name(u) == "stablehlo.select":
            operands = graph.nodes[u].operation.operands
            q = graph.producer(operands[0])
            if q in candidates and graph.producer(operands[1]) == p:
                return q
    return None


def _effectively_unary(graph: DataflowGraph, p: int) -> bool:
    """XLA's EffectivelyAtMostUnary: `p` reads at most one operand as large as its
    result (not counting broadcasts, iotas, scalar constants and operands of lower
    rank, unit dims aside). XLA duplicates such a producer into every consumer that
    wants it, whatever the bytes (a compare of logits with their broadcast max makes
    a mask of a quarter of their bytes, which XLA recomputes in each reader)."""
    rank = max((_true_rank(r.type) for r in graph.results(p)), default=0)
    large = 0
    for v in graph.reads[p]:
        q = graph.producer(v)
        name = None if q is None else graph.name(q)
        if name in _SMALL_READS or (name == "stablehlo.constant" and _true_rank(v.type) == 0):
            continue
        large += _true_rank(v.type) >= rank
    return large <= 1


_SMALL_READS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.iota"})


def _true_rank(t) -> int:
    return sum(d != 1 for d in t.shape) if isinstance(t, ir.RankedTensorType) else 0
