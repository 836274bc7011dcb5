"""Call inlining: replace each func.call by a copy of its callee's body, as XLA's
CallInliner does before its fusion, so that the passes see what XLA's fusion sees.

Fused apart, a callee and its caller met only in memory: XLA CPU's library kernel
of a reduce could not take in the ops before it in another function (dirichlet's
softmax reads its log-gamma samples from a call: 30% of 8,000 samples were not JAX's
jitted bits), and a sampler drawn in a scan body ran op by op, without the
multiply-adds LLVM contracts in XLA's fused kernels. Inlined, all of it is fused as
XLA would fuse it (a broadcast widening a unit dim stays out of fusions in loop
bodies: opinfo.region_problem).

A constant argument reaches the callee's ops through a call of an identity function
(`@constant_argument_N`, opinfo.constant_argument): XLA's import folds math on a
constant it sees (tanh, sine, rsqrt, logistic and erf exactly, measured on jaxlib
0.10.2), while what a callee computes from its parameters it folds after inlining,
as its own kernels round it (truncated_normal's erf of its bounds: one ulp apart).
Through the identity call XLA folds as it does through JAX's call, and the passes
still know the value is a constant. A private function no op refers to any more is
erased; a recursive call is left.
"""
from __future__ import annotations

import re

from jaxlib.mlir import ir

from . import opinfo
from .framework import Pass, PassContext
from .graph import constant_arguments, folds_to_constant


class InlineCalls(Pass):
    name = "inline-calls"

    def run(self, module: ir.Module, ctx: PassContext) -> bool:
        if ctx.op_names is not None and "func.call" not in ctx.op_names:
            return False
        with module.context:
            if not inline_calls(module):
                return False
            # the callees' bodies moved into their callers: the constants changed
            ctx.constant_args = constant_arguments(module)
        return True


def inline_calls(module: ir.Module) -> int:
    """Inline every call in `module` (the calls of inlined bodies too), but those of
    the identity functions it passes constants through; return how many."""
    funcs = {op.attributes["sym_name"].value: op for op in module.body.operations
             if op.operation.name == "func.func"}
    inlinable: dict[str, bool] = {}  # callee -> whether to inline it, asked once

    def may_inline(name: str) -> bool:
        if name not in inlinable:
            inlinable[name] = (name in funcs and len(funcs[name].regions[0].blocks) == 1
                               and not name.startswith(opinfo.CONSTANT_ARGUMENT)
                               and not _recursive(name, funcs))
        return inlinable[name]
    identities = _Identities(module, funcs)
    inlined = 0
    while True:
        calls = [op for f in funcs.values() if len(f.regions[0].blocks) == 1
                 for block in [f.regions[0].blocks[0], *_region_blocks(f.regions[0].blocks[0])]
                 for op in block.operations if op.operation.name == "func.call"
                 and may_inline(op.attributes["callee"].value)]
        if not calls:
            break
        for call in calls:
            _inline(call, funcs[call.attributes["callee"].value], identities)
        inlined += len(calls)
    if inlined:
        _erase_unreferenced(module, funcs)
    return inlined


class _Identities:
    """The identity functions constants pass through, one per type, made as needed."""

    def __init__(self, module: ir.Module, funcs: dict):
        self.module, self.funcs = module, funcs
        self.by_type: dict[str, str] = {}

    def opaque(self, value: ir.Value, before, memo: dict) -> ir.Value:
        """`value`, through an identity call placed before op `before` if XLA's import
        would see it as a constant (`memo`: folds_to_constant's, for one call site:
        an erased op's values may come back as new ones)."""
        if not folds_to_constant(value, frozenset(), memo, through_calls=False):
            return value
        identity = ir.Operation.create(
            "func.call", results=[value.type], operands=[value],
            attributes={"callee": ir.FlatSymbolRefAttr.get(self._function(value.type))},
            loc=before.location, ip=ir.InsertionPoint(before))
        return identity.results[0]

    def _function(self, t: ir.Type) -> str:
        key = str(t)
        if key not in self.by_type:
            name = next(f"{opinfo.CONSTANT_ARGUMENT}{n}" for n in range(len(self.funcs) + 1)
                        if f"{opinfo.CONSTANT_ARGUMENT}{n}" not in self.funcs)
            function_type = ir.FunctionType.get([t], [t])
            func = ir.Operation.create(
                "func.func", regions=1, loc=ir.Location.unknown(),
                ip=ir.InsertionPoint(self.module.body),
                attributes={"sym_name": ir.StringAttr.get(name),
                            "sym_visibility": ir.StringAttr.get("private"),
                            "function_type": ir.TypeAttr.get(function_type)})
            block = func.regions[0].blocks.append(t, arg_locs=[ir.Location.unknown()])
            ir.Operation.create("func.return", operands=[block.arguments[0]],
                                loc=ir.Location.unknown(), ip=ir.InsertionPoint(block))
            self.funcs[name] = func
            self.by_type[key] = name
        return self.by_type[key]


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


def _inline(call, callee, identities: _Identities) -> None:
    """Move a fresh copy of `callee`'s body before `call`, reading the call's
    operands, and let the call's readers read what the body returns. A constant
    crosses the old boundary through an identity call, either way."""
    memo: dict = {}
    operands = [identities.opaque(v, call, memo) for v in call.operation.operands]
    copy = callee.operation.clone(ip=False)
    body = copy.regions[0].blocks[0]
    for arg, value in zip(body.arguments, operands):
        arg.replace_all_uses_with(value)
    ops = list(body.operations)
    for op in ops[:-1]:
        op.operation.move_before(call.operation)
    for result, value in zip(call.operation.results, ops[-1].operation.operands):
        result.replace_all_uses_with(identities.opaque(value, call, memo))
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
