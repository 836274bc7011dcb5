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
        if all(not list(r.uses) for r in op.results):
            op.erase()
    topological_sort(graph.block)
    return [fusion for _, fusion, _ in built]


def _build(graph: DataflowGraph, group: Group, backend: Backend):
    members = sorted(group.members)
    inputs = graph.inputs(group.members)
    outputs = graph.outputs(group.members, group.owned)
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


def _flat(op) -> list:
    return opinfo.fusion_body(op) if opinfo.name(op) == opinfo.FUSION else [op]


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


def canonicalize(block: ir.Block) -> None:
    """Fold op(x, x) = x for idempotent ops, turn a float divide by a broadcast into
    a multiply by the broadcast reciprocal and a float multiply by a converted bool
    into a select, replace a zero-element result by a constant, then erase the ops
    we understand whose results nothing reads. XLA's simplifier does all of these
    after us, but never
    inside a fusion: a fusion output only dead code read vanishes under its feet
    (XLA CPU aborts, found by the random-program test), and a fused divide stays a
    divide per element. So the passes see, and fuse, the program XLA would see."""
    for op in list(block.operations)[:-1]:
        if opinfo.name(op) == "stablehlo.divide":
            _multiply_by_reciprocal(op)
        _empty_to_constant(op)
    for op in list(block.operations)[:-1]:
        if opinfo.name(op) == "stablehlo.multiply":
            _bool_multiply_to_select(op)
    for op in list(block.operations)[:-1]:
        operands = list(op.operation.operands)
        if opinfo.name(op) in opinfo.IDEMPOTENT and operands[-1] == operands[-2]:
            op.operation.results[0].replace_all_uses_with(operands[-1])
    for op in reversed(list(block.operations)[:-1]):
        if opinfo.name(op) in opinfo.KNOWN and not any(list(r.uses) for r in op.operation.results):
            op.operation.erase()


def _empty_to_constant(op) -> None:
    """A zero-element result holds nothing: XLA makes it a constant, and what only
    it read dies under XLA's feet (found by random programs: a sibling reduce read
    only through a zero-element slice made XLA CPU abort, "has_layout()")."""
    operation = op.operation
    if (opinfo.name(op) not in opinfo.KNOWN or opinfo.name(op) == "stablehlo.constant"
            or len(operation.results) != 1 or not opinfo.static_tensor(operation.results[0].type)
            or opinfo.num_elements(operation.results[0].type)):
        return
    result = operation.results[0]
    with op.location, ir.InsertionPoint(op):
        empty = ir.Operation.create("stablehlo.constant", results=[result.type], attributes={
            "value": ir.Attribute.parse(f"dense<> : {result.type}")})
    result.replace_all_uses_with(empty.results[0])


def _bool_multiply_to_select(multiply) -> None:
    """convert(p) * y -> select(p, y, 0) for a bool p and floats, as XLA's simplifier
    rewrites it outside fusions: where p is false the product is 0 even for an
    infinite or nan y (so a bool divided by a bool 0 is 0, not nan, under jax.jit;
    found by the fuzzer). Fused, the multiply would stay and give nan."""
    result_type = multiply.result.type
    if not isinstance(ir.RankedTensorType(result_type).element_type, ir.FloatType):
        return
    for k, v in enumerate(multiply.operation.operands):
        convert = v.owner
        if (isinstance(convert, ir.Block) or convert.name != "stablehlo.convert"
                or opinfo.element_type(convert.operands[0].type) != "i1"):
            continue
        element = ir.RankedTensorType(result_type).element_type
        with multiply.location, ir.InsertionPoint(multiply):
            scalar = ir.RankedTensorType.get([], element)
            zero = ir.Operation.create("stablehlo.constant", results=[scalar], attributes={
                "value": ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(element, 0.0))})
            zeros = ir.Operation.create(
                "stablehlo.broadcast_in_dim", results=[result_type], operands=[zero.results[0]],
                attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})
            select = ir.Operation.create(
                "stablehlo.select", results=[result_type],
                operands=[convert.operands[0], multiply.operation.operands[1 - k],
                          zeros.results[0]])
        multiply.result.replace_all_uses_with(select.results[0])
        return


def _multiply_by_reciprocal(divide) -> None:
    """x / broadcast(b) -> x * broadcast(1 / b), for f32/f64 with b smaller than x (in
    bf16/f16 a rounded 1 / b changes the quotient where XLA keeps the divide; found by
    the fuzzer)."""
    x, divisor = divide.operation.operands
    spread = divisor.owner
    if (isinstance(spread, ir.Block) or spread.name != "stablehlo.broadcast_in_dim"
            or str(ir.RankedTensorType(x.type).element_type) not in ("f32", "f64")):
        return
    b = spread.operands[0]
    if opinfo.num_elements(b.type) >= opinfo.num_elements(divisor.type):
        return
    element = ir.RankedTensorType(b.type).element_type
    with divide.location, ir.InsertionPoint(divide):
        scalar = ir.RankedTensorType.get([], element)
        # a scalar broadcast, as JAX writes constants: a fusion takes it in
        ones = ir.Operation.create("stablehlo.constant", results=[scalar], attributes={
            "value": ir.DenseElementsAttr.get_splat(scalar, ir.FloatAttr.get(element, 1.0))})
        if ir.RankedTensorType(b.type).rank:
            ones = ir.Operation.create(
                "stablehlo.broadcast_in_dim", results=[b.type], operands=[ones.results[0]],
                attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})
        reciprocal = ir.Operation.create("stablehlo.divide", results=[b.type],
                                         operands=[ones.results[0], b])
        spread_back = spread.clone(ip=ir.InsertionPoint(divide))
        spread_back.operands[0] = reciprocal.results[0]
        product = ir.Operation.create("stablehlo.multiply", results=[divide.result.type],
                                      operands=[x, spread_back.results[0]])
    divide.result.replace_all_uses_with(product.results[0])


def topological_sort(block: ir.Block) -> None:
    """Reorder `block` so every value is defined before use, moving as few ops as
    the original order allows (ties go to the earlier op)."""
    ops = list(block.operations)
    terminator, ops = ops[-1], ops[:-1]
    position = {op.operation: k for k, op in enumerate(ops)}
    waiting = [0] * len(ops)
    users = [[] for _ in ops]
    for k, op in enumerate(ops):
        producers = {position.get(v.owner.operation) for v in reads_of(op)
                     if not isinstance(v.owner, ir.Block)} - {None}
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
