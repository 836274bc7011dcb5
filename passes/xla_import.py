"""What XLA's import does to our fusions before anything else sees them.

XLA turns a StableHLO module into HLO through MHLO, whose canonicalizer folds ops
inside every mhlo.fusion region: `or(x, true)`, `and(x, false)`, `x - 0` then
`x == x`, a select on a constant predicate, ... A fused parameter that only the
folded ops read is then unread, and XLA's verifier refuses the module ("Non-root
instruction parameter ... must have users") before its first pass. Those folds
follow MHLO's folders, not rules we could keep in step by hand, so the import
itself is asked: the fused module is converted exactly as compile_and_load
converts it (jaxlib's mlir_module_to_xla_computation, milliseconds) and every
fused computation is read for an unread parameter or a shape that is no longer
the fusion's.
"""
from __future__ import annotations

import functools
import re

from jaxlib import xla_client
from jaxlib.mlir import ir


_TAG = "tracehlo_fusion"
_COMPUTATION = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$|^(?:ENTRY )?%?([\w.\-]+) \{$")
_INSTRUCTION = re.compile(r"^\s*(ROOT )?%?([\w.\-]+) = (.*?) ([a-z][\w\-]*)\((.*)$")
_LAYOUT = re.compile(r"\{[^{}]*\}")
_NAME = re.compile(r"[\w.\-]+")


def folded_fusions(fusions: list) -> dict[int, str]:
    """Index into `fusions` -> why XLA's import leaves that fusion invalid."""
    if not fusions:
        return {}
    return dict(_imported_problems(_probe(fusions)))


@functools.lru_cache(maxsize=4)  # passes.fuse asks twice: before and in check_backend
def _imported_problems(probe: str) -> tuple:
    try:
        hlo = xla_client._xla.mlir.mlir_module_to_xla_computation(
            probe, use_tuple_args=False, return_tuple=False).as_hlo_text()
    except Exception:  # XLA refuses the fusions for other reasons: compiling says which
        return ()
    return tuple(_problems(hlo).items())


def _probe(fusions: list) -> str:
    """A module whose `main` holds a copy of each fusion, reading arguments of its
    own and tagged with its index: what XLA's import folds in a fusion depends on
    its body alone, and the import needs a `main` the module may not have."""
    operand_types = [v.type for f in fusions for v in f.operands]
    with fusions[0].context, ir.Location.unknown():
        probe = ir.Module.create()
        function_type = ir.FunctionType.get(operand_types,
                                            [r.type for f in fusions for r in f.results])
        main = ir.Operation.create(
            "func.func", regions=1, ip=ir.InsertionPoint(probe.body),
            attributes={"sym_name": ir.StringAttr.get("main"),
                        "function_type": ir.TypeAttr.get(function_type)})
        block = main.regions[0].blocks.append(*operand_types)
        ip, args, results = ir.InsertionPoint(block), iter(block.arguments), []
        for k, fusion in enumerate(fusions):
            copy = fusion.clone(ip=ip)
            for i in range(len(fusion.operands)):
                copy.operands[i] = next(args)
            copy.attributes["mhlo.frontend_attributes"] = ir.Attribute.parse(
                f'{{{_TAG} = "{k}"}}')
            results += copy.results
        ir.Operation.create("func.return", operands=results, ip=ip)
        return probe.operation.get_asm()


def _problems(hlo: str) -> dict[int, str]:
    computations: dict[str, list[tuple]] = {}
    current = None
    for line in hlo.splitlines():
        if current is None:
            m = _COMPUTATION.match(line)
            if m and not line.startswith("HloModule"):
                current = computations.setdefault(m.group(1) or m.group(2), [])
        elif line == "}":
            current = None
        else:
            m = _INSTRUCTION.match(line)
            if m:
                current.append(m.groups())
    problems = {}
    for instructions in computations.values():
        for _, _, shape, opcode, rest in instructions:
            tag = re.search(_TAG + r'="(\d+)"', rest)
            called = re.search(r"calls=%?([\w.\-]+)", rest)
            if opcode != "fusion" or not tag or not called:
                continue
            reason = _fused_problem(computations.get(called.group(1), []), shape)
            if reason:
                problems[int(tag.group(1))] = reason
    return problems


def _fused_problem(instructions: list[tuple], fusion_shape: str) -> str | None:
    read = {token for *_, rest in instructions for token in _NAME.findall(rest)}
    for root, name, shape, opcode, _ in instructions:
        if root and _LAYOUT.sub("", shape) != _LAYOUT.sub("", fusion_shape):
            return (f"XLA's import folds the fused ops to a {_LAYOUT.sub('', shape)} "
                    f"result, not the fusion's {_LAYOUT.sub('', fusion_shape)}")
        if not root and name not in read:
            return ("XLA's import folds the fused ops that read one of its operands "
                    "(an op with a constant that decides its result, such as or(x, true)), "
                    f"leaving a fused {opcode} unread")
    return None
