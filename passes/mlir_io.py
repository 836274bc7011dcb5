"""Parse and print StableHLO modules with jaxlib's MLIR bindings.

One context per module: MLIR objects belong to the context that made them, and a
fresh context keeps one parse's diagnostics and attributes away from another's.
"""
from __future__ import annotations

import functools

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, mhlo, stablehlo
from jaxlib.mlir._mlir_libs import _jax_mlir_ext


class ParseError(ValueError):
    """The text is not a valid module; the message is MLIR's diagnostic, as
    `file:line:col: error: ...` lines."""


@functools.lru_cache(maxsize=None)
def make_context() -> ir.Context:
    """One context per process: building one costs more than a small module's passes."""
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)  # builtin, func and friends
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    stablehlo.register_dialect(ctx)
    mhlo.register_mhlo_dialect(ctx)
    chlo.register_dialect(ctx)
    ctx.load_all_available_dialects()
    return ctx


def _format_diagnostics(err: ir.MLIRError, filename: str) -> str:
    lines = []
    for diag in err.error_diagnostics:
        lines.append(f"{_format_loc(diag.location, filename)}: error: {diag.message}")
        lines.extend(f"{_format_loc(n.location, filename)}: note: {n.message}" for n in diag.notes)
    return "\n".join(lines) or str(err)


def _format_loc(loc: ir.Location, filename: str) -> str:
    text = str(loc)  # loc("-":3:5)
    if text.startswith('loc("-":'):
        return filename + ":" + text[len('loc("-":'):-1]
    return text


def parse(text: str, filename: str = "<string>", ctx: ir.Context | None = None) -> ir.Module:
    """Parse and verify `text`; `filename` names it in diagnostics."""
    ctx = ctx or make_context()
    with ctx, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as err:
            raise ParseError(_format_diagnostics(err, filename)) from None
        verify(module, filename)
    return module


def verify(module: ir.Module, filename: str = "<string>") -> None:
    with module.context:
        try:
            module.operation.verify()
        except ir.MLIRError as err:
            raise ParseError(_format_diagnostics(err, filename)) from None


def to_text(module: ir.Module, debug_info: bool = False) -> str:
    return module.operation.get_asm(enable_debug_info=debug_info)
