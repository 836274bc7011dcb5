"""Region-call inlining: replace each func.call inside a while, case or if region
by a copy of its callee's body, as XLA's CallInliner does before its fusion.

JAX lowers a sampler drawn in a scan body as a call there. XLA inlines it and
fuses its ops with the body's; our passes cannot fuse the callee itself (XLA's loop
analysis inlines it and trips over fusions in it, graph.functions), so it ran op by
op and LLVM did not contract its multiply-adds as in JAX's jitted kernels: a normal
drawn in a scan lost the last bits of JAX's jitted samples. Inlined, its ops are fused in the region
as XLA would fuse them there (a broadcast widening a unit dim stays out of fusions
there: opinfo.region_problem). Calls outside regions stay: fused apart, truncated
normal with array bounds keeps JAX's jitted bits, and inlined in an earlier attempt it
did not. A private function no op refers to any more is erased; a recursive call is
left.
"""
from __future__ import annotations

import re

from jaxlib.mlir import ir

from . import opinfo
from .framework import Pass, PassContext
from .graph import constant_arguments


class InlineRegionCalls(Pass):
    name = "inline-region-calls"

    def run(self, module: ir.Module, ctx: PassContext) -> None:
        with module.context:
            if inline_region_calls(module):
                # the callees' bodies moved into regions: the constant analysis changed
                ctx.constant_args = constant_arguments(module)


def inline_region_calls(module: ir.Module) -> int:
    """Inline every call inside a control-flow region of a function in `module`
    (the calls of inlined bodies too); return how many were inlined."""
    funcs = {op.attributes["sym_name"].value: op for op in module.body.operations
             if op.operation.name == "func.func"}
    inlinable: dict[str, bool] = {}  # callee -> whether to inline it, asked once

    def may_inline(name: str) -> bool:
        if name not in inlinable:
            inlinable[name] = (name in funcs and len(funcs[name].regions[0].blocks) == 1
                               and not _recursive(name, funcs))
        return inlinable[name]
    inlined = 0
    while True:
        calls = [op for f in funcs.values() if len(f.regions[0].blocks) == 1
                 for block in _region_blocks(f.regions[0].blocks[0])
                 for op in block.operations if op.operation.name == "func.call"
                 and may_inline(op.attributes["callee"].value)]
        if not calls:
            break
        for call in calls:
            _inline(call, funcs[call.attributes["callee"].value])
        inlined += len(calls)
    if inlined:
        _erase_unreferenced(module, funcs)
    return inlined


def _region_blocks(block: ir.Block):
    for op in block.operations:
        if op.operation.name in opinfo.CONTROL_FLOW:
            for region in op.operation.regions:
                for inner in region.blocks:
                    yield inner
                    yield from _region_blocks(inner)


def _callees(func) -> set[str]:
    found = set()

    def visit(op):
        if op.name == "func.call":
            found.add(op.attributes["callee"].value)
        return ir.WalkResult.ADVANCE
    func.operation.walk(visit)
    return found


def _recursive(name: str, funcs: dict) -> bool:
    """Whether `name` calls itself, directly or not (no StableHLO program does)."""
    seen, todo = set(), [name]
    while todo:
        current = todo.pop()
        if current not in funcs:
            continue
        for callee in _callees(funcs[current]):
            if callee == name:
                return True
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return False


def _inline(call, callee) -> None:
    """Move a fresh copy of `callee`'s body before `call`, reading the call's
    operands, and let the call's readers read what the body returns."""
    copy = callee.operation.clone(ip=False)
    body = copy.regions[0].blocks[0]
    for arg, value in zip(body.arguments, call.operation.operands):
        arg.replace_all_uses_with(value)
    ops = list(body.operations)
    for op in ops[:-1]:
        op.operation.move_before(call.operation)
    for result, value in zip(call.operation.results, ops[-1].operation.operands):
        result.replace_all_uses_with(value)
    call.operation.erase()
    copy.erase()


def _erase_unreferenced(module: ir.Module, funcs: dict) -> None:
    """Erase each private function no op refers to any more: no call, and no symbol
    in another attribute (a custom call's called_computations, a composite's
    decomposition), until none is left (an erased callee's callees may follow). Read
    from the printed module with constants elided: Python cannot read every
    attribute (a complex dense constant has no class to cast to)."""
    private = {name for name, f in funcs.items() if "sym_visibility" in f.attributes
               and f.attributes["sym_visibility"].value == "private"}
    while private:
        named: dict[str, int] = {}
        for symbol in _SYMBOL.findall(module.operation.get_asm(large_elements_limit=1)):
            named[symbol.strip('"')] = named.get(symbol.strip('"'), 0) + 1
        # named once: its own definition only
        unreferenced = {name for name in private if named.get(name, 0) <= 1}
        if not unreferenced:
            return
        for name in unreferenced:
            funcs[name].operation.erase()
        private -= unreferenced


_SYMBOL = re.compile(r'@("[^"]*"|[\w.$\-]+)')
