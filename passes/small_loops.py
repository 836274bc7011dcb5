"""Which while loops XLA CPU compiles whole into one kernel, where our fusions lack layouts.

XLA CPU runs a program as thunks, one per kernel, each fusion emitted by its fusion
emitters. Its SmallWhileLoopHoistingPass, the last of its HLO passes, makes an
exception: a while loop one iteration of which (body and condition, as XLA's
HloCostAnalysis counts bytes accessed once fused) touches fewer bytes than
`xla_cpu_small_while_loop_byte_threshold` (1024 unless an xla_backend_extra_options
entry of XLA_FLAGS says otherwise) becomes a call that its legacy IrEmitter emits
whole, nested branches and loops included. That emitter reads each fused op through
a layout, which inside our fusions only parameters, constants and the root have: a
fused reduce, or a broadcast or reverse of a value computed in the fusion, aborts it
(opinfo.region_problem, capability.region_read_problem). Elsewhere, in larger loops
and in branches outside them, the same fusions compile and run (measured:
test_passes_capability.py, the same fusions in a loop over 512 bytes and over 128).

So a block lacks layouts if some while loop around it may be hoisted. What XLA will
count is not known before XLA has simplified and fused the loop, so may_be_hoisted
answers yes unless a lower bound on those bytes reaches the threshold: the bytes the
body writes into the carried values it really changes, skipping anything XLA could
remove (a dead or loop-invariant carry, an op its simplifier may turn into one of its
operands, a reshape it makes a bitcast).
"""
from __future__ import annotations

import os
import re

from jaxlib.mlir import ir

from . import opinfo
from .graph import reads_of

DEFAULT_THRESHOLD = 1024  # bytes: XLA CPU's default (cpu_options.cc), jaxlib 0.10.2
_THRESHOLD_FLAG = re.compile(r"xla_cpu_small_while_loop_byte_threshold=(-?\d+)")

# Ops whose result XLA may hand on without writing it: a bitcast, a tuple element,
# control flow that may return an operand; a custom call keeps the loop out of the
# hoisting pass anyway.
_FREE = frozenset({"stablehlo.reshape", "stablehlo.transpose", "stablehlo.bitcast_convert",
                   "stablehlo.get_tuple_element", "stablehlo.optimization_barrier",
                   "stablehlo.custom_call", "func.call", "stablehlo.constant",
                   "stablehlo.iota"} | opinfo.CONTROL_FLOW)
_ELEMENTWISE = opinfo.CHEAP_ELEMENTWISE | opinfo.EXPENSIVE_ELEMENTWISE
# Data movement XLA's simplifier removes where its result is its operand.
_MAY_BE_IDENTITY = opinfo.CHEAP_SHAPE | {"stablehlo.dynamic_slice", "stablehlo.gather",
                                         "stablehlo.reduce", "stablehlo.reduce_window",
                                         "stablehlo.sort"}


def threshold() -> int:
    """XLA CPU's byte threshold, from XLA_FLAGS as its CPU client read them at start."""
    found = _THRESHOLD_FLAG.findall(os.environ.get("XLA_FLAGS", ""))
    return int(found[-1]) if found else DEFAULT_THRESHOLD


def lacks_layouts(block: ir.Block) -> bool:
    """Whether XLA CPU may emit the fusions of `block` (a function body, or a block of
    a while, case or if region) without layouts on the ops inside them."""
    op = block.owner.operation
    while op is not None and op.name != "func.func":
        if op.name == "stablehlo.while" and may_be_hoisted(op):
            return True
        op = op.parent
    return False


def may_be_hoisted(loop) -> bool:
    return written_bytes_lower_bound(loop) < threshold()


def written_bytes_lower_bound(loop) -> int:
    """Bytes one iteration of `loop` surely writes into its carried values."""
    loop = loop.operation
    cond, body = (region.blocks[0] for region in loop.regions)
    args = list(body.arguments)
    ops = list(body.operations)
    results = list(ops[-1].operands)
    changed = {k for k, (arg, result) in enumerate(zip(args, results)) if result != arg}
    # each body value -> the indices of the carried values it is computed from
    made_from = {arg: frozenset({k}) for k, arg in enumerate(args)}
    for op in ops[:-1]:
        found = frozenset().union(*(made_from.get(v, frozenset()) for v in reads_of(op)))
        made_from.update((r, found) for r in op.operation.results)
    # a carry is live if read after the loop, by the condition, or by a live carry
    cond_args = list(cond.arguments)
    live = {k for k, r in enumerate(loop.results) if opinfo.is_read(r)}
    live |= {cond_args.index(v) for op in cond.operations for v in reads_of(op)
             if v in cond_args}
    todo = list(live)
    while todo:
        for k in made_from.get(results[todo.pop()], ()):
            if k not in live:
                live.add(k)
                todo.append(k)
    return sum(_written_bytes(results[k]) for k in live
               if k in changed and made_from.get(results[k], frozenset()) & changed)


def _written_bytes(value) -> int:
    """Bytes the op making `value` surely writes, 0 where XLA may not write it."""
    if isinstance(value.owner, ir.Block):
        return 0
    op = value.owner.operation
    name = op.name
    operands = list(op.operands)
    if name in _FREE:
        return 0
    if name == "stablehlo.dynamic_update_slice":  # in place: the update only
        return opinfo.type_bytes(operands[1].type)
    if (name in _MAY_BE_IDENTITY or name == "stablehlo.convert") and any(
            v.type == value.type for v in operands):
        return 0  # a slice, pad, broadcast, convert, ... that may be the identity
    if name in _ELEMENTWISE and (len(set(operands)) < len(operands)
                                 or any(map(_constant_made, operands))):
        return 0  # x * 1, max(x, x), select(true, x, y): the simplifier's to fold
    return opinfo.type_bytes(value.type)


def _constant_made(value) -> bool:
    """Whether `value` is a constant, broadcast or reshaped or converted."""
    while not isinstance(value.owner, ir.Block):
        name = value.owner.operation.name
        if name == "stablehlo.constant":
            return True
        if name not in ("stablehlo.broadcast_in_dim", "stablehlo.broadcast",
                        "stablehlo.reshape", "stablehlo.convert"):
            return False
        value = value.owner.operation.operands[0]
    return False
