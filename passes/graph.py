"""A dataflow view of one block (a function's body, or a block of a while, case or
if region inside one): nodes are its top-level ops, edges are SSA uses.

Values captured by nested regions (a while body reading an outer value) count as
uses of the op that owns the region, so no edge is ever missed; in the region's
own view they are inputs, like block arguments, so nothing is fused across a
region boundary. The view is rebuilt from the IR at the start of each pass: the
IR stays the one truth.
"""
from __future__ import annotations

from collections import deque

from jaxlib.mlir import ir

from . import opinfo
from .report import where


class DataflowGraph:
    def __init__(self, block: ir.Block, constant_args: frozenset[int] = frozenset(),
                 lacks_layouts: bool = False):
        self.block = block
        self.constant_args = {self.block.arguments[k] for k in constant_args}
        # nodes the backend computes better than any fusion of ours: node -> why
        # (Backend.reserved_nodes, which the fusion passes set)
        self.reserved: dict[int, str] = {}
        all_ops = list(self.block.operations)
        self.terminator = all_ops[-1]
        self.nodes = all_ops[:-1]
        self.names = [op.operation.name for op in self.nodes]  # asked often
        self._results = [tuple(op.operation.results) for op in self.nodes]  # asked often
        # the node making each value (a block argument or an outer value: none);
        # a dict, as asking the bindings for a value's owner is slow
        self._producer = {r: i for i, results in enumerate(self._results) for r in results}
        # values a node reads, in first-use order, without repeats
        self.reads: list[list[ir.Value]] = [reads_of(op) for op in self.nodes]
        self.value_users: dict[ir.Value, list[int]] = {}
        for i, values in enumerate(self.reads):
            for v in values:
                self.value_users.setdefault(v, []).append(i)
        self.returned = set(self.terminator.operation.operands)
        self._returned_nodes = {self._producer.get(v) for v in self.returned}
        self.operands = [sorted({p for v in vs if (p := self.producer(v)) is not None})
                         for vs in self.reads]
        self.users: list[list[int]] = [[] for _ in self.nodes]
        for i, producers in enumerate(self.operands):
            for p in producers:
                self.users[p].append(i)
        # why each node may join no fusion (unfusible(i)), kept once asked
        self._unfusible: dict[int, str | None] = {}
        # legality.node_problem per node, on the backend this graph's pass fuses for
        # (which also sets `reserved`)
        self.node_problems: dict[int, str | None] = {}
        # whether XLA emits the block's fusions with layouts on their parameters,
        # constants and root only (Backend.lacks_layouts: a block of a while, case
        # or if region it may compile whole), so the region rules apply
        self.lacks_layouts = lacks_layouts
        # legality._outside_entries and _fused_reads per node, computed when first asked
        self.outside_entries: dict[int, list] = {}
        self.fused_reads: dict[int, list] = {}
        self.numbered: dict[int, tuple] = {}  # legality._numbered_member
        # what XLA's CSE compares of an op or a fusion parameter, by op or value
        # (capability.cse_id, parameter_key): the fusion checks ask again for every
        # candidate group; the IR does not change while a pass plans
        self.cse_memo: dict = {}
        self._where: dict[int, tuple] = {}
        self._bodies: dict[int, list] = {}
        self._expensive: dict[int, bool] = {}
        self.effectively_unary: dict[int, bool] = {}  # instruction_fusion's, per node
        self._bytes: dict = {}  # value -> opinfo.type_bytes of its type
        self.read_bytes: dict = {}  # value -> cost.read_bytes
        self.flops: dict[int, int] = {}  # node -> cost.node_flops
        # constants and ops computed from constants only: XLA folds these
        self.constant = []
        for i, op in enumerate(self.nodes):
            self.constant.append(op.operation.name == "stablehlo.constant" or (
                bool(self.reads[i]) and all(self.is_constant(v) for v in self.reads[i])
                and (self.unfusible(i) is None or opinfo.constant_argument(op))))
        # ops between the same two side-effecting ops share an epoch; fusion never
        # groups ops of different epochs, so effects keep their place in the order
        self.epoch, epoch = [], 0
        for op in self.nodes:
            side_effect = opinfo.is_side_effecting(op)
            epoch += side_effect
            self.epoch.append(epoch)
            epoch += side_effect

    def is_constant(self, value: ir.Value) -> bool:
        p = self.producer(value)
        return value in self.constant_args if p is None else self.constant[p]

    def fusion_body(self, i: int) -> list:
        """opinfo.fusion_body of fusion node `i`, kept: the legality checks ask for
        it with every group the node may join."""
        body = self._bodies.get(i)
        if body is None:
            body = self._bodies[i] = opinfo.fusion_body(self.nodes[i])
        return body

    def is_expensive(self, i: int) -> bool:
        """opinfo.is_expensive of node `i`, kept: every group it may join asks (of a
        fusion, through the body kept by fusion_body)."""
        expensive = self._expensive.get(i)
        if expensive is None:
            expensive = self._expensive[i] = (
                any(map(opinfo.is_expensive, self.fusion_body(i)))
                if self.names[i] == opinfo.FUSION else opinfo.is_expensive(self.nodes[i]))
        return expensive

    def bytes(self, value: ir.Value) -> int:
        """opinfo.type_bytes of `value`'s type, kept: the cost model asks again for
        every group that reads or writes it."""
        n = self._bytes.get(value)
        if n is None:
            n = self._bytes[value] = opinfo.type_bytes(value.type)
        return n

    def unfusible(self, i: int) -> str | None:
        """Why node `i` may join no fusion (None: it may)."""
        if i not in self._unfusible:
            op = self.nodes[i]
            why = opinfo.unfusible_reason(op)
            self._unfusible[i] = why or (opinfo.region_problem(op) if self.lacks_layouts else None)
        return self._unfusible[i]

    def where(self, i: int) -> tuple:
        """report.where of node `i`, kept: every decision of a growing fusion names
        its root."""
        if i not in self._where:
            self._where[i] = where(self.nodes[i])
        return self._where[i]

    def __len__(self) -> int:
        return len(self.nodes)

    def name(self, i: int) -> str:
        return self.names[i]

    def producer(self, value: ir.Value) -> int | None:
        return self._producer.get(value)

    def results(self, i: int) -> tuple[ir.Value, ...]:
        return self._results[i]

    def outputs(self, group: set[int], owned: set[int] | None = None) -> list[ir.Value]:
        """Values made by the `owned` members of `group` (default: all) that
        something outside it reads."""
        return [r for i in sorted(group if owned is None else owned) for r in self.results(i)
                if r in self.returned or self._read_outside(r, group, i)]

    def _read_outside(self, r: ir.Value, group: set[int], i: int) -> bool:
        readers = self.value_users.get(r, ())
        # an unread result of a multi-result op stays an output: XLA's verifier
        # rejects a fused tuple element that nothing reads
        return any(u not in group for u in readers) or (
            not readers and len(self.nodes[i].operation.results) > 1)

    def inputs(self, group: set[int]) -> list[ir.Value]:
        """Values read inside `group` that are made outside it."""
        seen = {}
        for i in sorted(group):
            for v in self.reads[i]:
                if self.producer(v) not in group:
                    seen.setdefault(v, None)
        return list(seen)

    def is_returned(self, i: int) -> bool:
        return i in self._returned_nodes

    def creates_cycle(self, group: set[int], planned: list[set[int]] = ()) -> bool:
        """Whether a path leaves `group` and comes back: one kernel for the group
        would then both feed and read the ops on that path. Groups already
        `planned` in this round count as the single kernels they will become."""
        kernel_of = {i: k for k, g in enumerate(planned) for i in g}
        last = max(group | {i for g in planned for i in g})

        def users(n):
            members = planned[kernel_of[n]] if n in kernel_of else (n,)
            return (u for m in members for u in self.users[m])

        todo = deque(u for i in group for u in self.users[i] if u not in group)
        seen = set(todo)
        while todo:
            for u in users(todo.popleft()):
                if u in group:
                    return True
                if u < last and u not in seen:
                    seen.add(u)
                    todo.append(u)
        return False


def reads_of(op) -> list[ir.Value]:
    """The values `op` reads, its operands first, then those its regions read from
    outside it, in first-use order, without repeats."""
    operation = op.operation
    values = dict.fromkeys(operation.operands)
    if not len(operation.regions) or operation.name == opinfo.FUSION:
        return list(values)  # a fused computation reads its parameters only (as in HLO)
    defined: set = set()
    read: list = []
    _walk_regions(operation, defined, read)
    values.update((v, None) for v in read if v not in defined)
    return list(values)


def _walk_regions(operation, defined: set, read: list) -> None:
    """Add to `read` the operands of every op inside `operation`'s regions, in order,
    and to `defined` every value made there, in one walk (asking each value for its
    owner's ancestors made a loop nest quadratic in its depth); a fusion's body reads
    its parameters only, so no walk goes into one."""
    for region in operation.regions:
        for block in region.blocks:
            defined.update(block.arguments)
            for inner in block.operations:
                inner = inner.operation
                read.extend(inner.operands)
                defined.update(inner.results)
                if len(inner.regions) and inner.name != opinfo.FUSION:
                    _walk_regions(inner, defined, read)


def op_names(module: ir.Module) -> frozenset[str]:
    """The names of the ops in `module`, nested ones included: one walk, after which
    a pass with nothing of its kind to do (no call, no CHLO op) skips its own."""
    names = set()

    def visit(op):
        names.add(op.name)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return frozenset(names)


def functions(module: ir.Module, names: frozenset[str] | None = None) -> list:
    """The functions whose body the passes fuse: func.func with one block, except
    those called (directly or not) from inside a region, such as a while body.
    XLA's loop analysis inlines such calls and trips over fusions in them
    (measured on the corpus with XLA CPU: "Fused computation shape ... is not
    equal to the fusion shape", or an abort in hlo_extractor; both are HLO passes
    every XLA backend runs, so it holds for every Backend). `names`: op_names of
    the module, if known (without a call in it, no op is looked at)."""
    funcs = {op.attributes["sym_name"].value: op for op in module.body.operations
             if op.operation.name == "func.func"}
    in_region = set()
    todo = [] if names is not None and "func.call" not in names else [
        callee for f in funcs.values() for block in f.regions[0].blocks
        for op in block.operations for callee in _calls_in(op)]
    while todo:
        name = todo.pop()
        if name in funcs and name not in in_region:
            in_region.add(name)
            todo.extend(_calls_in(funcs[name]))
    return [op for name, op in funcs.items()
            if name not in in_region and len(op.regions[0].blocks) == 1]


def blocks(module: ir.Module, funcs: list | None = None, graphs: dict | None = None):
    """(function name, block) for each block the passes fuse: the body of each of
    `funcs` (default: functions(module)), then the blocks of the while, case and if
    regions inside it, at any depth (measured: XLA CPU compiles a fusion inside a while body).
    Lazy: a block's nested blocks are found after the caller has rewritten it, from
    its DataflowGraph in `graphs` if one is kept there up to date (PassContext.graphs:
    listing a block's ops costs about as much as a small pass's planning)."""
    for func in functions(module) if funcs is None else funcs:
        name = func.attributes["sym_name"].value
        body = func.regions[0].blocks[0]
        yield name, body
        for block in _region_blocks(body, graphs or {}):
            yield name, block


def _region_blocks(block: ir.Block, graphs: dict):
    graph = graphs.get(block)
    if graph is None:
        ops = list(block.operations)
        names = [op.operation.name for op in ops]
    else:
        ops, names = graph.nodes, graph.names
    for op, name in zip(ops, names):
        if name in opinfo.CONTROL_FLOW:
            for region in op.operation.regions:
                for inner in region.blocks:
                    yield inner
                    yield from _region_blocks(inner, graphs)


def folds_to_constant(value: ir.Value, constant_args, memo: dict,
                      through_calls: bool = True) -> bool:
    """Whether XLA folds `value` to a constant once it has inlined the calls: a
    constant, an argument in `constant_args` (the block arguments every call passes a
    constant), or an op we know computing from such values alone (as
    DataflowGraph.is_constant), passed through an identity call of inline_calls or
    not. `through_calls` False: what XLA's import sees as constant before it inlines.
    `memo` keeps the answers (one memo per `through_calls`)."""
    if value not in memo:
        op = value.owner
        if isinstance(op, ir.Block):
            memo[value] = value in constant_args
        else:
            # x ^ x and integer x - x are 0 to XLA (a self-compare canonicalize folds
            # itself, once inline_calls has chosen which arguments are constants)
            memo[value] = opinfo.name(op) == "stablehlo.constant" or (
                opinfo.folds_identical_integers(op) and opinfo.name(op) != "stablehlo.compare"
            ) or (
                len(op.operands) > 0
                and (opinfo.name(op) in opinfo.KNOWN and opinfo.name(op) != opinfo.FUSION
                     or through_calls and opinfo.constant_argument(op))
                and all(folds_to_constant(v, constant_args, memo, through_calls)
                        for v in op.operands))
    return memo[value]


def constant_arguments(module: ir.Module,
                       names: frozenset[str] | None = None) -> dict[str, frozenset[int]]:
    """For each function, the arguments every call passes a constant. XLA inlines
    calls before it folds constants, so what a function computes from these alone
    is folded too, and (with excess precision allowed) rounded differently from
    the same math in a fusion. `names`: as for functions."""
    funcs = {op.attributes["sym_name"].value: op for op in module.body.operations
             if op.operation.name == "func.func" and len(op.regions[0].blocks) == 1}
    known = {name: frozenset() for name in funcs}
    if names is not None and "func.call" not in names or not any(
            _calls_in(f) for f in funcs.values()):
        return known
    while True:
        passed: dict[str, frozenset[int]] = {}
        for name, func in funcs.items():
            graph = DataflowGraph(func.regions[0].blocks[0], known[name])
            for op in graph.nodes:
                for callee in _calls_in(op):  # inside a region: runs many times
                    passed[callee] = frozenset()
                if op.operation.name == "func.call":
                    callee = op.attributes["callee"].value
                    constant = frozenset(k for k, v in enumerate(op.operation.operands)
                                         if graph.is_constant(v))
                    passed[callee] = passed.get(callee, constant) & constant
        found = {name: passed.get(name, frozenset()) if _private(func) else frozenset()
                 for name, func in funcs.items()}
        if found == known:
            return known
        known = found


def _private(func) -> bool:
    visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
    return visibility is not None and visibility.value == "private"


def _calls_in(op) -> list[str]:
    """Callees of the func.call ops inside `op`'s regions, at any depth."""
    found = []
    for region in op.operation.regions:
        for block in region.blocks:
            for inner in block.operations:
                if inner.operation.name == "func.call":
                    found.append(inner.attributes["callee"].value)
                found += _calls_in(inner)
    return found
