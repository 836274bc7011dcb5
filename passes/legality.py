"""XLA's fusion legality rules, shared by the four passes.

Each check returns the reason a candidate is illegal, or None: the passes record
that reason, so a refused fusion is as explainable as a performed one.
"""
from __future__ import annotations

import collections

from jaxlib.mlir import ir

from . import opinfo
from .capability import (HLO_ELEMENTWISE, Backend, bf16_parameter_source,
                         bitwise_of_narrowing_problem, cse_id, parameter_key,
                         reduce_cone_problem, reduce_root, region_read_problem, select_problem,
                         shared_value_problem, unread_outputs_problem)
from .graph import DataflowGraph


def reduces_in(graph: DataflowGraph, i: int) -> list:
    if graph.name(i) == opinfo.FUSION:
        return [o for o in graph.fusion_body(i) if opinfo.name(o) == opinfo.REDUCE]
    return [graph.nodes[i]] if graph.name(i) == opinfo.REDUCE else []


def fused_size(graph: DataflowGraph, i: int) -> int:
    """How many ops node `i` puts in a fusion."""
    return len(graph.fusion_body(i)) if graph.name(i) == opinfo.FUSION else 1


def _size_problem(size: int, backend: Backend) -> str | None:
    if backend.max_fused_ops is not None and size > backend.max_fused_ops:
        return (f"{size} ops in one fusion exceed XLA {backend.name}'s bound of "
                f"{backend.max_fused_ops}")
    return None


def node_problem(graph: DataflowGraph, i: int, backend: Backend) -> str | None:
    """Why node `i` can join no fusion on `backend` (the one the graph's passes fuse
    for: the answer is kept in the graph, as every group the node may join asks)."""
    if i not in graph.node_problems:
        graph.node_problems[i] = _node_problem(graph, i, backend)
    return graph.node_problems[i]


def _node_problem(graph: DataflowGraph, i: int, backend: Backend) -> str | None:
    if graph.name(i) == opinfo.FUSION:
        return None
    if i in graph.reserved:
        return graph.reserved[i]
    if graph.constant[i] and (graph.name(i) in opinfo.CHEAP_ELEMENTWISE
                              or graph.name(i) in opinfo.EXPENSIVE_ELEMENTWISE):
        # fused, XLA folds it inside the fusion, then maybe the op reading it
        # (a select on a constant predicate), leaving a fused parameter unread
        return "arithmetic on constants: left to XLA's constant folding"
    return backend.problem_given(graph.nodes[i], graph.unfusible(i))


def group_problem(graph: DataflowGraph, group: set[int], backend: Backend, max_operands: int,
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
    reason = _size_problem(sum(fused_size(graph, i) for i in group), backend)
    if reason:
        return reason
    reduces = [r for i in group for r in reduces_in(graph, i)]
    reason = _reduces_problem(len(reduces), backend, reduce_heroes)
    if reason:
        return reason
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
    if len(outputs) > 1 and not backend.multi_output:
        reason = _multi_output_problem(graph, outputs, backend, sibling_reduces=reduce_heroes > 1)
        if reason:
            return reason
    if not backend.layout_sensitive_ops:
        reason = _layout_problem(graph, group) or (
            len(group) > 1 and shared_value_problem(*_fused_producers(graph, group),
                                                    graph.cse_memo))
        if reason:
            return reason
    if not backend.reduce_inside_loop and reduces and _reduce_feeds_group(graph, group):
        return f"a reduce may only be a fusion root on {backend.name}"
    return None


def _reduces_problem(n_reduces: int, backend: Backend, heroes: int) -> str | None:
    """A fusion's reduces beyond its `heroes` (a GPU reduction kernel's loop follows
    one reduce; siblings of one shape share it) are fine on a backend whose loop
    fusions compute a reduce per output element, where one reduce may feed others
    (XLA CPU fuses divide(sum(a), sum(b)) itself); reuse_problem keeps a reduce from
    being recomputed per element of a broadcast."""
    if n_reduces > heroes and not backend.reduce_inside_loop:
        return f"{n_reduces} reductions: at most {heroes} reduction hero per fusion"
    return None


class GrowingGroup:
    """A fusion that instruction fusion grows one producer at a time, with what
    group_problem checks kept up to date as each node joins: a check then looks at
    the new node and its readers, not at every member, so growing a chain of n ops
    costs O(n), not O(n^2) (a 1000-op chain took 24 s)."""

    def __init__(self, graph: DataflowGraph, root: int, backend: Backend, max_operands: int,
                 emitter_check: bool = True, sure_merges_only: bool = False):
        self.graph, self.backend, self.max_operands = graph, backend, max_operands
        # False: problem() leaves out the emitter check (shared_value_problem), and the
        # caller checks the grown group whole (emitter_problem); all but its reduce
        # rule, which stays asked at every step: a later member computing the shared
        # parameter would lift it, and the rule is measured only where it was found
        self.emitter_check = emitter_check
        # with emitter_check: each step's check trusts only the merges XLA's CSE surely
        # makes (shared_value_problem's sure_merges_only)
        self.sure_merges_only = sure_merges_only
        self.members, self.owned = {root}, {root}
        self.inputs = dict.fromkeys(graph.reads[root])  # read from outside, in order
        self.outputs = graph.outputs({root})
        self.reduces = len(reduces_in(graph, root))
        self.epoch = graph.epoch[root]
        self.size = fused_size(graph, root)
        # members' readers outside the group: where a path that could come back leaves
        self.exits = set(graph.users[root])
        # XLA-CSE keys of the fused ops that read only values from outside the group
        # (with their operands), per member: a joining op can be made one with a
        # member by XLA's CSE only if its own key is among these
        self.leaf_keys: collections.Counter = collections.Counter()
        self.leaves: dict[int, list] = {}
        self.has_fusion = False
        # a reduce that members read (one joined as a producer): capability's
        # reduce_cone_problem looks at the whole group then; a root reduce needs not
        self.read_reduce = False
        # members in the root's emitter function at its index map: each read only by
        # elementwise members of it. XLA's CSE making two of them one op changes no
        # function, so such a merge needs no whole-group check (a chain's broadcast
        # constants: each copy is one with the last, and a 1000-op chain checked the
        # whole group at every third link). A member's function follows from its
        # readers, all members when it joins: None once an op reads a member, a
        # fusion joins, or a merge outside it may move functions.
        self.root_function: set[int] | None = {root}
        # leaf keys held by members outside the root function (see leaf_keys)
        self.other_leaf_keys: collections.Counter = collections.Counter()
        self._merge_verdict: tuple = (None, False)
        if emitter_check:
            self._count_leaves(root)

    def outputs_with(self, p: int) -> list:
        """The group's outputs once `p` joins as an owned member (an unread result of
        a multi-result op, say, stays one)."""
        self.members.add(p)  # as a member, for a moment
        added = self.graph.outputs(self.members, {p})
        self.members.discard(p)
        return self.outputs + added

    def n_inputs_with(self, p: int) -> int:
        """How many inputs the group has once producer `p` joins."""
        return (len(self.inputs) - sum(r in self.inputs for r in self.graph.results(p))
                + sum(v not in self.inputs for v in self.graph.reads[p]))

    def problem(self, p: int, owned: bool) -> str | None:
        """Why producer `p` (owned: its original dies; else a copy) cannot join."""
        graph, backend = self.graph, self.backend
        reason = node_problem(graph, p, backend)
        if reason:
            return reason
        reason = _size_problem(self.size + fused_size(graph, p), backend)
        if reason:
            return reason
        if graph.epoch[p] != self.epoch:
            return "a side-effecting op lies between these ops"
        p_reduces = reduces_in(graph, p)
        reason = _reduces_problem(self.reduces + len(p_reduces), backend, 1)
        if reason:
            return reason
        if owned and self.owned == self.members and self._comes_back(p):
            return "would create a cycle: a path leaves the group and comes back"
        n_inputs = self.n_inputs_with(p)
        if not n_inputs:
            return "a constant expression: left to XLA's constant folding"
        outputs = self.outputs_with(p) if owned else self.outputs
        n_io = n_inputs + len(outputs)
        if n_io > self.max_operands:
            return f"{n_io} operands+outputs exceed the bound of {self.max_operands}"
        if len(outputs) > 1 and not backend.multi_output:
            reason = _multi_output_problem(graph, outputs, backend, sibling_reduces=False)
            if reason:
                return reason
        readers = [u for u in graph.users[p] if u in self.members]
        if not backend.layout_sensitive_ops:
            # a chain needs no look at the whole group: only a node read twice in it
            # (a fusion: by its insides; an op XLA's CSE makes one with a member), or
            # a bf16 input, can end an emitter function; a node read twice only by
            # elementwise members of the root's function joins that function. (A
            # reduce read in the group, which ends functions, asks for the whole check
            # too: the broadcast XLA's import puts under a select of a scalar predicate,
            # which no leaf key tracks, can be made one with a member across it.)
            look = self.emitter_check and (
                (len(readers) > 1 and not self._in_root_function(p, readers))
                or self.has_fusion or self.read_reduce
                or p_reduces
                or graph.name(p) == opinfo.FUSION
                or self._merge_problem(p, readers)
                or self._rereads_bf16(p))
            # checked whole later, the emitter's reduce rule is still asked as it grows
            cone = not self.emitter_check and (self.read_reduce or bool(readers and p_reduces))
            self.members.add(p)  # as a member, for a moment
            reason = _layout_problem(graph, self.members, [p, *readers]) or (
                look and shared_value_problem(*_fused_producers(graph, self.members),
                                              graph.cse_memo, self.sure_merges_only)) or (
                cone and reduce_cone_problem(*_fused_producers(graph, self.members)))
            self.members.discard(p)
            if reason:
                return reason
        if not backend.reduce_inside_loop and p_reduces and readers:
            return f"a reduce may only be a fusion root on {backend.name}"
        return None

    def _rereads_bf16(self, p: int) -> bool:
        """Whether `p` reads a bf16 value the group reads already, or one XLA's
        simplifier makes the same (a reverse of unit dims of it): a parameter read
        twice (fuzz hlo-opt 7133)."""
        reads = [v for v in self.graph.reads[p] if opinfo.element_type(v.type) == "bf16"]
        if not reads:
            return False
        memo = self.graph.cse_memo
        sources = {bf16_parameter_source(v, memo) for v in self.inputs
                   if opinfo.element_type(v.type) == "bf16"}
        return any(v in self.inputs or bf16_parameter_source(v, memo) in sources for v in reads)

    def _merge_problem(self, p: int, readers: list[int]) -> bool:
        """Whether `p` joining may be made one with a member by XLA's CSE in a way
        that could move an emitter function. Asked by problem and again by add, of
        the same members: the answer is kept for that many members."""
        state = (p, len(self.members))
        if self._merge_verdict[0] != state:
            self._merge_verdict = (state, self._may_merge(p, readers) and not (
                self._in_root_function(p, readers)
                and not any(self.other_leaf_keys[key] for key in _outside_keys(self.graph, p))))
        return self._merge_verdict[1]

    def _in_root_function(self, p: int, readers: list[int]) -> bool:
        """Whether `p`, joining now, lands in the root's emitter function."""
        graph, known = self.graph, self.root_function
        return (known is not None and bool(readers) and len(graph.results(p)) == 1
                and graph.name(p) != opinfo.FUSION
                and self.members.isdisjoint(graph.operands[p])
                and all(r in known and graph.name(r) in HLO_ELEMENTWISE
                        for r in readers))

    def _may_merge(self, p: int, readers: list[int]) -> bool:
        """Whether XLA's CSE may make `p` one op with a member once it joins. Keys
        are built bottom-up, a value made in the group keyed by its maker's key and
        one read from outside by parameter_key, never equal to an op's: so an op
        reading only outside values can equal only a member that does too, with
        the same key. Its readers' ops that read it stop being such members, and an
        op reading a member is looked at whole."""
        graph = self.graph
        if not self.members.isdisjoint(graph.operands[p]):
            return True
        keys = [key for key in _outside_keys(graph, p) if self.leaf_keys[key] > 0]
        if not keys:  # no member's key to be one with (most candidates)
            return False
        results = set(graph.results(p))
        leaving = collections.Counter(key for r in readers for key, outer in self.leaves[r]
                                      if not results.isdisjoint(outer))
        return any(self.leaf_keys[key] > leaving[key] for key in keys)

    def _count_leaves(self, p: int) -> None:
        """Keeps leaf_keys up to date as `p` joins (p already a member)."""
        graph, results = self.graph, set(self.graph.results(p))
        for r in graph.users[p]:
            if r in self.members and r != p:
                kept, dropped = [], []
                for entry in self.leaves[r]:
                    (kept if results.isdisjoint(entry[1]) else dropped).append(entry)
                if dropped:
                    self.leaf_keys.subtract(key for key, _ in dropped)
                    if self.root_function is not None and r not in self.root_function:
                        self.other_leaf_keys.subtract(key for key, _ in dropped)
                    self.leaves[r] = kept
        self.leaves[p] = [(key, outer) for key, outer in _outside_entries(graph, p)
                          if all(graph.producer(v) not in self.members for v in outer)]
        if self.leaves[p]:
            self.leaf_keys.update(key for key, _ in self.leaves[p])
            if self.root_function is not None and p not in self.root_function:
                self.other_leaf_keys.update(key for key, _ in self.leaves[p])
        self.has_fusion |= graph.name(p) == opinfo.FUSION

    def _comes_back(self, p: int) -> bool:
        """Whether a path from the group's exits reaches `p` (it would then both feed
        and read the fused kernel). Nodes are in topological order, so nothing after
        `p` leads to it."""
        todo = [u for u in self.exits if u < p]
        seen = set(todo)
        while todo:
            n = todo.pop()
            if n == p:
                return True
            for u in self.graph.users[n]:
                if u <= p and u not in seen:
                    seen.add(u)
                    todo.append(u)
        return False

    def add(self, p: int, owned: bool) -> None:
        if self.emitter_check and self.root_function is not None:
            readers = [u for u in self.graph.users[p] if u in self.members]
            if (self.graph.name(p) == opinfo.FUSION
                    or self._merge_problem(p, readers)):
                self.root_function = None
            elif self._in_root_function(p, readers):
                self.root_function.add(p)
        if owned:
            self.outputs = self.outputs_with(p)
            self.owned.add(p)
        self.members.add(p)
        if owned:
            self.exits.update(u for u in self.graph.users[p] if u not in self.members)
        self.exits.discard(p)
        for r in self.graph.results(p):
            self.inputs.pop(r, None)
        self.inputs.update((v, None) for v in self.graph.reads[p])
        p_reduces = reduces_in(self.graph, p)
        self.reduces += len(p_reduces)
        self.read_reduce |= bool(p_reduces)
        self.size += fused_size(self.graph, p)
        if self.emitter_check:
            self._count_leaves(p)

    def emitter_problem(self, sure_merges_only: bool = True) -> str | None:
        """The emitter check of the whole group (what problem() asks as it grows),
        trusting only the merges XLA's CSE surely makes; else as check_backend asks."""
        if self.backend.layout_sensitive_ops or len(self.members) == 1:
            return None
        return shared_value_problem(*_fused_producers(self.graph, self.members),
                                    self.graph.cse_memo, sure_merges_only)


def _fused_reads(graph: DataflowGraph, i: int) -> list:
    """(op, operands) for the ops member `i` puts in a fusion, each operand the
    value read from outside the member (None for one computed inside it)."""
    reads = graph.fused_reads.get(i)
    if reads is None:
        op = graph.nodes[i]
        if opinfo.name(op) != opinfo.FUSION:
            reads = [(op, list(op.operation.operands))]
        else:
            body = op.operation.regions[0].blocks[0]
            outer = dict(zip(body.arguments, op.operation.operands))
            reads = [(inner, [outer.get(v) for v in inner.operation.operands])
                     for inner in graph.fusion_body(i)]
        graph.fused_reads[i] = reads
    return reads


def _outside_entries(graph: DataflowGraph, i: int) -> list[tuple]:
    """(XLA-CSE key number, operands) of the ops member `i` fuses that read only values
    from outside it. Two identical ops join a fusion one at a time, their identical
    producers too, the last ones reading the same values: comparing these keys
    finds them. Kept per node: every group node `i` may join asks again."""
    entries = graph.outside_entries.get(i)
    if entries is None:
        entries = graph.outside_entries[i] = [
            (cse_id(op.operation, [parameter_key(v, graph.cse_memo) for v in outer],
                    graph.cse_memo), tuple(outer))
            for op, outer in _fused_reads(graph, i)
            if all(v is not None for v in outer) and not len(op.operation.regions)]
    return entries


def _outside_keys(graph: DataflowGraph, i: int) -> set:
    return {key for key, _ in _outside_entries(graph, i)}


def _numbered_member(graph: DataflowGraph, i: int) -> tuple[list, list[list], list]:
    """Member `i`'s fused operations; what makes each one's operands (the index of
    one of them, or the value read from outside `i`); and what makes each of `i`'s
    results (an index, or the parameter's value a fusion root passes through).
    Kept per node: every group the node may join asks again."""
    numbered = graph.numbered.get(i)
    if numbered is None:
        reads = _fused_reads(graph, i)
        operations = [op.operation for op, _ in reads]
        if graph.name(i) != opinfo.FUSION:  # an op reads nothing made inside itself
            makers = [outer for _, outer in reads]
            roots = [0] * len(graph.results(i))
        else:
            index = {o: k for k, o in enumerate(operations)}
            makers = [[index.get(v.owner.operation, v.owner.operation) if o is None else o
                       for v, o in zip(operation.operands, outer)]
                      for operation, (_, outer) in zip(operations, reads)]
            roots = [graph.nodes[i].operation.operands[v.arg_number]
                     if isinstance(v.owner, ir.Block) else index[v.owner.operation]
                     for v in opinfo.fusion_roots(graph.nodes[i])]
        numbered = graph.numbered[i] = (operations, makers, roots)
    return numbered


def _numbering(graph: DataflowGraph, group: set[int]):
    """The ops `group` fuses, numbered in member order; the first number of each
    member; and a function from a value a member reads to the number of the op
    that makes it once `group` is one fusion (through member fusions' roots), or
    the value itself when it comes from outside."""
    operations, first = [], {}
    maker = {}  # a member's result -> the op's number (or outer value) making it in the fusion
    for i in sorted(group):
        ops, _, roots = _numbered_member(graph, i)
        first[i] = len(operations)
        maker.update((r, first[i] + m if type(m) is int else m)
                     for r, m in zip(graph.results(i), roots))
        operations += ops

    def made_by(value):
        while isinstance(value, ir.Value) and value in maker:
            value = maker[value]
        return value
    return operations, first, made_by


def _fused_maker(graph: DataflowGraph, group: set[int], value: ir.Value):
    """The op making `value` once `group` is one fusion (through member fusions'
    roots, one passing a parameter through leading on to what feeds it), or the
    value itself when it comes from outside: _numbering's made_by for one value,
    without numbering the whole group, which _layout_problem asked at every step."""
    while (i := graph.producer(value)) is not None and i in group:
        operations, _, roots = _numbered_member(graph, i)
        made = roots[graph.results(i).index(value)]
        if type(made) is int:
            return operations[made]
        value = made
    return value


def _fused_producers(graph: DataflowGraph, group: set[int]) -> tuple[list, list[list]]:
    """capability.shared_value_problem's view of `group` as one fusion: the ops it
    fuses, and what makes each one's operands (a fused op's number, or the value
    read from outside)."""
    operations, first, made_by = _numbering(graph, group)
    makers = [[first[i] + m if type(m) is int else made_by(m) for m in operand_makers]
              for i in first for operand_makers in _numbered_member(graph, i)[1]]
    return operations, makers


# the fused ops whose operands' makers matter (select_problem, bitwise_of_narrowing_problem)
_READS_MAKERS = frozenset({"stablehlo.select", "stablehlo.and", "stablehlo.or"})
_MAY_HOLD_READERS_OF_MAKERS = _READS_MAKERS | {opinfo.FUSION}


def _layout_problem(graph: DataflowGraph, group: set[int], nodes=None) -> str | None:
    """Layout problems of `nodes` (default: all) as members of `group`, and the
    other problems of a fused op with what makes its operands in the fusion."""
    for i in group if nodes is None else nodes:
        if not graph.lacks_layouts and graph.name(i) not in _MAY_HOLD_READERS_OF_MAKERS:
            continue
        for op, operands in _fused_reads(graph, i):
            reads_makers = opinfo.name(op) in _READS_MAKERS
            if not reads_makers and not graph.lacks_layouts:
                continue
            outside = [v is not None and graph.producer(v) not in group for v in operands]
            makers = None
            if reads_makers:  # what makes its operands, merged
                makers = [None if out else v.owner if o is None else _fused_maker(graph, group, o)
                          for v, o, out in zip(op.operation.operands, operands, outside)]
            reason = (select_problem(op, outside, makers)
                      or bitwise_of_narrowing_problem(op, makers)
                      or (region_read_problem(op, outside) if graph.lacks_layouts else None))
            if reason:
                return reason
    return None


def _multi_output_problem(graph: DataflowGraph, outputs, backend: Backend,
                          sibling_reduces: bool) -> str | None:
    """Why `outputs` (more than one) cannot leave one fusion on `backend`, which
    compiles multi-output fusions only as one variadic reduce."""
    if not _reduce_outputs(graph, outputs, sibling_reduces):
        return (f"{len(outputs)} outputs: {backend.name} compiles multi-output fusions "
                "only as one variadic reduce")
    return unread_outputs_problem(len(outputs), sum(
        not graph.value_users.get(v) and v not in graph.returned for v in outputs))


def _reduce_outputs(graph: DataflowGraph, outputs, sibling_reduces: bool) -> bool:
    """Whether the outputs are one reduce's results (or, for sibling reductions
    to be combined, several reduces' results)."""
    owners = {graph.producer(v) for v in outputs}
    return (all(reduce_root(graph.nodes[i]) is not None for i in owners)
            and (len(owners) == 1 or sibling_reduces))


def _reduce_feeds_group(graph: DataflowGraph, group: set[int]) -> bool:
    return any(u in group for i in group if reduces_in(graph, i) for u in graph.users[i])


def reuse_problem(graph: DataflowGraph, producer: int, consumers: set[int]) -> str | None:
    """An expensive producer must not be recomputed for every read of a consumer
    that reads each of its elements more than once (a broadcast, say)."""
    if not graph.is_expensive(producer):
        return None
    op = graph.nodes[producer]
    produced = set(graph.results(producer))
    for c in consumers:
        user = graph.nodes[c].operation
        for k, v in enumerate(user.operands):
            if v in produced and opinfo.reuses_operand(user, k):
                return (f"expensive {opinfo.name(op)} would be recomputed: "
                        f"{user.name} reads each element more than once")
    return None
