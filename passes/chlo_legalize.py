"""CHLO legalization: expand CHLO ops (lgamma, atan, erf_inv, ...) into StableHLO with
the MLIR passes XLA's import runs, so that the fusion passes fuse the ops XLA fuses.

Left to XLA's import, each CHLO op reached it unfused and became many HLO ops there,
each its own kernel with XLA's fusion off, where JAX's jit fuses them with their
neighbours; XLA CPU contracts a multiply feeding an add in one kernel into an FMA, so
those kernel boundaries rounded otherwise (poisson's lgamma: 5 of 16 counts on one
key differed from JAX's jit). This pass is the import's own expansion (xla/pjrt/
mlir_to_hlo.cc, MlirToXlaComputation): chlo-legalize-to-high-level-mhlo, which keeps
what XLA has an HLO op for (erf and top_k everywhere, sinh and the inverse
trigonometric ops on GPU: Backend.chlo_to_mhlo_options) as an mhlo op, then
chlo-legalize-to-stablehlo. The expansions' constants are splats of the operand's
shape; XLA's simplifier makes each a broadcast of a scalar before its fusion
(AlgebraicSimplifier::HandleConstant), which fuses it: so does this pass, or our
fusions would read them as parameters, and LLVM would lose the constant (atan2(x, 1)
rounded otherwise, fuzzer seed 5016). A module without CHLO ops is left as it is.
"""
from __future__ import annotations

import functools

from jaxlib.mlir import ir, passmanager
from jaxlib.mlir._mlir_libs import _mlirHlo, _stablehlo

from . import opinfo
from .framework import Pass, PassContext


class ChloLegalize(Pass):
    name = "chlo-legalize"

    def run(self, module: ir.Module, ctx: PassContext) -> bool:
        if ctx.op_names is not None and not any(n.startswith("chlo.") for n in ctx.op_names):
            return False
        return legalize_chlo(module, ctx.backend.chlo_to_mhlo_options)


def legalize_chlo(module: ir.Module, chlo_to_mhlo_options: str = "") -> bool:
    """Expand the CHLO ops of `module` as XLA's import does; False if it has none."""
    with module.context:
        own, has_chlo = _constants(module.operation)
        if not has_chlo:
            return False
        _register_passes()
        passmanager.PassManager.parse(
            f"builtin.module(func.func(chlo-legalize-to-high-level-mhlo"
            f"{{{chlo_to_mhlo_options}}}),func.func(chlo-legalize-to-stablehlo))"
        ).run(module.operation)
        for constant in _constants(module.operation)[0] - own:
            _broadcast_splat(constant)
    return True


@functools.cache
def _register_passes() -> None:
    _stablehlo.register_stablehlo_passes()
    _mlirHlo.register_mhlo_passes()


def _constants(operation) -> tuple[set, bool]:
    """The stablehlo.constant ops under `operation`, and whether a CHLO op is there (no
    reference to one is kept: the expansion erases them)."""
    constants, has_chlo = set(), False

    def visit(op):
        nonlocal has_chlo
        if op.name == "stablehlo.constant":
            constants.add(op)
        has_chlo = has_chlo or op.name.startswith("chlo.")
        return ir.WalkResult.ADVANCE
    operation.walk(visit)
    return constants, has_chlo


def _broadcast_splat(constant) -> None:
    """A constant of more than one element, all equal, as a broadcast of a scalar one."""
    result = constant.results[0]
    try:
        attr = ir.DenseElementsAttr(constant.attributes["value"])
    except TypeError:  # complex: no Python class to read it with
        return
    if not attr.is_splat or opinfo.num_elements(result.type) <= 1:
        return
    with constant.location, ir.InsertionPoint(constant):
        scalar_type = ir.RankedTensorType.get([], result.type.element_type)
        scalar = ir.Operation.create("stablehlo.constant", results=[scalar_type], attributes={
            "value": ir.DenseElementsAttr.get_splat(scalar_type, attr.get_splat_value())})
        broadcast = ir.Operation.create(
            "stablehlo.broadcast_in_dim", results=[result.type], operands=[scalar.result],
            attributes={"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})
    result.replace_all_uses_with(broadcast.result)
    constant.erase()
