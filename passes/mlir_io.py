"""Parse and print StableHLO modules with jaxlib's MLIR bindings.

MLIR objects belong to the context that made them; modules share a context that is
replaced after a few megabytes of text, so their constants are freed (make_context).
"""
from __future__ import annotations

import threading

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import chlo, mhlo, sdy, stablehlo
from jaxlib.mlir._mlir_libs import _jax_mlir_ext


_lock = threading.Lock()


class ParseError(ValueError):
    """The text is not a valid module; the message is MLIR's diagnostic, as
    `file:line:col: error: ...` lines."""


def new_context() -> ir.Context:
    """A context with every dialect the passes read or write (mhlo for fusions), and
    every dialect XLA's compile loads into the context of a module it is handed
    (runtime.compile; measured: sdy, Shardy's): loaded there, while other threads
    parse or rewrite modules of the same context, it raced with them and crashed
    the process (a thread stress test, python_tests/test_threads.py)."""
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)  # builtin, func and friends
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    stablehlo.register_dialect(ctx)
    mhlo.register_mhlo_dialect(ctx)
    chlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    ctx.load_all_available_dialects()
    return ctx


# A context keeps every attribute it ever made (constants included: they are uniqued,
# never freed) until it dies, so one context for the whole process grew by each
# compile's constants for good (+264 KB per 256 KB constant). Building one costs
# about as much as a small module's passes, so one is shared until it has taken in
# this much module text, then a fresh one takes over; the old one dies with the
# last module parsed into it.
RECYCLE_AFTER_BYTES = 4 << 20
_shared: dict = {"context": None, "bytes": 0}


def make_context(text_bytes: int = 0) -> ir.Context:
    """The shared context, for `text_bytes` more of module text."""
    with _lock:
        if _shared["context"] is None or _shared["bytes"] > RECYCLE_AFTER_BYTES:
            _shared.update(context=new_context(), bytes=0)
        _shared["bytes"] += text_bytes
        return _shared["context"]


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
    """Parse and verify `text` (Module.parse runs the verifier: a second pass over a
    module on every compile would cost as much again); `filename` names it in
    diagnostics."""
    ctx = ctx or make_context(len(text))
    with ctx, ir.Location.unknown():
        try:
            return ir.Module.parse(text)
        except ir.MLIRError as err:
            raise ParseError(_format_diagnostics(err, filename)) from None


def verify(module: ir.Module, filename: str = "<string>") -> None:
    with module.context:
        try:
            module.operation.verify()
        except ir.MLIRError as err:
            raise ParseError(_format_diagnostics(err, filename)) from None


def to_text(module: ir.Module, debug_info: bool = False) -> str:
    return module.operation.get_asm(enable_debug_info=debug_info)
