"""Tree reductions: split a long float sum into a reduce_window of partial sums and
a reduce of those, as XLA CPU's TreeReductionRewriter does before its fusion.

XLA CPU adds up a reduce over a dimension longer than 32 elements as a tree: a
reduce_window of 32-element windows (the dimension padded evenly with the init
value to a multiple of 32), then a reduce of the partial results, split again
while one is longer than 32. It rewrites computations that are not fusions only,
so a reduce inside one of our fusions would sum in order and round otherwise
than under JAX's jit (a dirichlet over 40 categories, an f64 sum of 40 numbers).
Split here, first, the reduce_window stays its own kernel, as in XLA's plan, and
the short reduce of partial sums fuses with what reads it, as XLA fuses it. Which
reduces split is the backend's answer (Backend.tree_reduction_window): a max, a
min or an integer sum comes out the same in any order, and XLA CPU's library
takes long f32 sums whole.
"""
from __future__ import annotations

from jaxlib.mlir import ir
import numpy as np

from . import opinfo
from .framework import Pass, PassContext
from .graph import blocks
from .rewrite import copy_reducer


class TreeReductions(Pass):
    name = "tree-reductions"
    moves_calls = False  # it rewrites StableHLO arithmetic only

    def run(self, module: ir.Module, ctx: PassContext) -> None:
        with module.context:
            for _, block in blocks(module, ctx.functions):
                for op in list(block.operations):
                    if op.operation.name != opinfo.REDUCE:  # what split_reduce splits
                        continue
                    window = ctx.backend.tree_reduction_window(op)
                    while window is not None:  # the partial sums may be long too
                        op = split_reduce(op, window)
                        window = ctx.backend.tree_reduction_window(op)


def split_reduce(reduce, window: int):
    """Replace `reduce` by a reduce_window of `window`-element partial results and a
    reduce of those (its new reduce, returned)."""
    operation = reduce.operation
    operand, init = operation.operands
    shape = ir.RankedTensorType(operand.type).shape
    dims = set(opinfo.int_array(operation.attributes["dimensions"]))
    sizes, padding, partials = [], [], []
    for d, n in enumerate(shape):
        size = 1 if d not in dims else min(n, window)
        pad = -n % size
        sizes.append(size)
        padding.append((pad // 2, pad - pad // 2))
        partials.append((n + pad) // size)
    element = ir.RankedTensorType(operand.type).element_type
    ip = ir.InsertionPoint(operation)
    with operation.location:
        windowed = ir.Operation.create(
            "stablehlo.reduce_window", results=[ir.RankedTensorType.get(partials, element)],
            operands=[operand, init], regions=1, ip=ip, attributes={
                "window_dimensions": ir.DenseI64ArrayAttr.get(sizes),
                "window_strides": ir.DenseI64ArrayAttr.get(sizes),
                "padding": ir.DenseElementsAttr.get(np.array(padding, np.int64))})
        copy_reducer(operation, windowed)
        final = ir.Operation.create(
            "stablehlo.reduce", results=[operation.results[0].type],
            operands=[windowed.results[0], init], regions=1, ip=ip,
            attributes={"dimensions": operation.attributes["dimensions"]})
        copy_reducer(operation, final)
    operation.results[0].replace_all_uses_with(final.results[0])
    operation.erase()
    return final


def order_dependent(reduce) -> bool:
    """Whether the order a reduce combines its elements in shows in its result: one
    float (or complex) result of a plain reducer other than max or min."""
    operation = reduce.operation
    if (opinfo.name(reduce) != opinfo.REDUCE or len(operation.operands) != 2
            or not opinfo.static_tensor(operation.operands[0].type)
            or not opinfo.plain_reducer(reduce)):
        return False
    element = ir.RankedTensorType(operation.operands[0].type).element_type
    return (isinstance(element, (ir.FloatType, ir.ComplexType))
            and opinfo.reducer(reduce) not in ("stablehlo.maximum", "stablehlo.minimum"))
