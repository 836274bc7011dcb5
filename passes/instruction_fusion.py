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
        fusible_everywhere = _fusible_on_all_paths(graph, ctx.backend)
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
            group = self._grow(graph, root, read, ctx, fusible_everywhere)
            alone = ctx.backend.fuse_alone(graph, root)
            if len(group.members) == 1:
                if alone is None:
                    continue
                self.record(ctx, graph, [root], None, alone)
            else:
                reason = ((None if alone else self._lone_op(graph, group.members))
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
        reduce keeps its init constant: XLA CPU emits a plain reduce differently.
        (Not asked where the backend would fuse the op even alone: Backend.fuse_alone.)"""
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

    def _grow(self, graph: DataflowGraph, root: int, read: set[int], ctx: PassContext,
              fusible_everywhere: set[int]) -> Group:
        """The group grown from `root`. The emitter check (shared_value_problem) looks
        at the whole group; asked at every step, it and what it keeps were a fifth of
        the pass's time on the train step. So the group grows without it and is
        checked whole once. Only if that check
        fails, or its verdict rests on a merge XLA's CSE need not make, is the group
        grown again asking it at every step, to stop where a step fails. A group that
        passes whole can fail on the way (a later member makes two ops one for XLA's
        CSE, so a value read by both is read once); it is fused whole."""
        decisions: list = []
        grown = self._grow_with(graph, root, read, ctx, fusible_everywhere, decisions, False)
        if grown.emitter_problem() is not None:
            decisions.clear()
            grown = self._grow_with(graph, root, read, ctx, fusible_everywhere, decisions, True)
            # a step's check keys values from outside by type, so a merge XLA's CSE
            # need not make can pass a step that a later member undoes: two compares of
            # one select with different constants from outside, one constant then
            # joining (fuzz jit --transform grad 221). Checked whole as check_backend
            # checks it, such a group grows once more, trusting sure merges only.
            if grown.emitter_problem(sure_merges_only=False) is not None:
                decisions.clear()
                grown = self._grow_with(graph, root, read, ctx, fusible_everywhere,
                                        decisions, True, sure_merges_only=True)
        for nodes, reason, why in decisions:
            self.record(ctx, graph, nodes, reason, why)
        return Group(grown.members, copies=grown.members - grown.owned)

    def _grow_with(self, graph: DataflowGraph, root: int, read: set[int], ctx: PassContext,
                   fusible_everywhere: set[int], decisions: list, emitter_check: bool,
                   sure_merges_only: bool = False):
        grown = legality.GrowingGroup(graph, root, ctx.backend, self.max_operands(ctx),
                                      emitter_check, sure_merges_only)
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
            reason = self._problem(graph, grown, sole, p, ctx, fusible_everywhere)
            decisions.append(([p, root], reason,
                              "all users in this fusion" if sole else "cheap producer copied"))
            if reason is None:
                grown.add(p, owned=sole)
                candidates.update(graph.operands[p])
        return grown

    @staticmethod
    def _written_anyway(graph: DataflowGraph, p: int, ctx: PassContext) -> bool:
        return graph.is_returned(p) or any(
            legality.node_problem(graph, u, ctx.backend) for u in graph.users[p])

    def _problem(self, graph: DataflowGraph, grown: legality.GrowingGroup, sole: bool, p: int,
                 ctx: PassContext, fusible_everywhere: set[int]) -> str | None:
        if not sole and graph.is_expensive(p):
            return (f"expensive {graph.name(p)} has users outside this fusion: "
                    "fusing would duplicate it")
        if not sole:
            # the original stays for other readers: a copy pays if its operands cost
            # less to read than its result; as much, only if the original may die
            # (no reader that no fusion can hold, such as a dot, keeps it written);
            # more, if every reader fuses it on all paths, so the original dies
            extra = sum(read_bytes(graph, v) for v in graph.reads[p] if v not in grown.inputs)
            result = sum(map(graph.bytes, graph.results(p)))
            if (extra > result and not _effectively_unary(graph, p)
                    and p not in fusible_everywhere
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


def _fusible_on_all_paths(graph: DataflowGraph, backend) -> set[int]:
    """The producers that XLA's ComputeGloballyUnfusible (xla/service/
    instruction_fusion.cc) lets be copied although they read more elements than
    they make: a producer that is not EffectivelyAtMostUnary and whose unique
    operands hold more elements than its result goes into XLA's do_not_duplicate
    unless it is fusible and every user u of it passes CanFuseOnAllPaths(producer,
    u): u is the producer, or u is fusible and each of its operands on a path from
    the producer is outside do_not_duplicate, may fuse into u (ShouldFuse) and
    passes CanFuseOnAllPaths itself. Every reader then computes its own copy and
    the original dies, so copying costs no memory traffic (the Threefry rounds'
    shared adds, which XLA copies into both of a round's outputs).

    Computed once per graph, users before producers (XLA's reverse post order),
    so do_not_duplicate is known for every node on a producer's paths. Fusible is
    legality.node_problem's none; ShouldFuse(u, q) is q fusible, an expensive q
    not duplicated (XLA's is_expensive test) and not reread (reuse_problem); a
    returned producer has the root tuple, which fuses nothing, as a user."""
    do_not_duplicate: set[int] = set()
    everywhere: set[int] = set()

    def fusible(i: int) -> bool:
        return (graph.name(i) != "stablehlo.constant"
                and not legality.node_problem(graph, i, backend))

    def should_fuse(u: int, q: int) -> bool:
        duplicated = graph.is_returned(q) or len(graph.users[q]) > 1
        return (fusible(q) and not (duplicated and graph.is_expensive(q))
                and legality.reuse_problem(graph, q, {u}) is None)

    for p in reversed(range(len(graph))):
        if not graph.reads[p] or _effectively_unary(graph, p):
            continue
        if (sum(_elements(v) for v in graph.reads[p])
                <= sum(_elements(r) for r in graph.results(p))):
            continue
        if not fusible(p) or graph.is_returned(p):
            do_not_duplicate.add(p)
            continue
        # CanFuseOnAllPaths(p, u) for p's users and the nodes on paths to them, in
        # program order (a node's operands come first); a path from p to a user
        # only passes nodes before that user
        last = max(graph.users[p])
        on_paths = {p: True}
        for u in sorted(_reachable(graph, p, last))[1:]:
            on_paths[u] = fusible(u) and all(
                q not in do_not_duplicate and should_fuse(u, q) and on_paths[q]
                for q in graph.operands[u] if q in on_paths)
        if all(on_paths[u] for u in graph.users[p]):
            everywhere.add(p)
        else:
            do_not_duplicate.add(p)
    return everywhere


def _reachable(graph: DataflowGraph, p: int, last: int) -> set[int]:
    """`p` and the nodes up to `last` that read it, directly or not."""
    seen, todo = {p}, [p]
    while todo:
        for u in graph.users[todo.pop()]:
            if u <= last and u not in seen:
                seen.add(u)
                todo.append(u)
    return seen


def _elements(v: ir.Value) -> int:
    t = v.type
    return opinfo.num_elements(t) if opinfo.static_tensor(t) else 0


def _effectively_unary(graph: DataflowGraph, p: int) -> bool:
    """XLA's EffectivelyAtMostUnary: `p` reads at most one operand as large as its
    result (not counting broadcasts, iotas, scalar constants and operands of lower
    rank, unit dims aside). XLA duplicates such a producer into every consumer that
    wants it, whatever the bytes (a compare of logits with their broadcast max makes
    a mask of a quarter of their bytes, which XLA recomputes in each reader). Kept
    per node: _fusible_on_all_paths asks of every node, and _problem of candidates."""
    unary = graph.effectively_unary.get(p)
    if unary is None:
        unary = graph.effectively_unary[p] = _count_large_reads(graph, p) <= 1
    return unary


def _count_large_reads(graph: DataflowGraph, p: int) -> int:
    """The operands `p` reads that count against _effectively_unary."""
    rank = max((_true_rank(r.type) for r in graph.results(p)), default=0)
    large = 0
    for v in graph.reads[p]:
        q = graph.producer(v)
        name = None if q is None else graph.name(q)
        if name in _SMALL_READS or (name == "stablehlo.constant" and _true_rank(v.type) == 0):
            continue
        large += _true_rank(v.type) >= rank
    return large


_SMALL_READS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.iota"})


def _true_rank(t) -> int:
    if not isinstance(t, ir.RankedTensorType):
        return 0
    shape = t.shape
    return len(shape) - shape.count(1)
