"""The primitives, one home each: its shape rule, its lowering, its `define` call and the
user-facing wrapper (`sin`, `add`, ...) sit together in one of these modules, so a rule
can call another primitive's wrapper (`mul(g, cos(x))`) without an import cycle.

`define` is the one way to register a primitive; each interpretation keeps its own table
(shape rules in core, lowering rules in lowering). A later interpretation (jvp, transpose,
batching) adds its table and a keyword here.
"""
from __future__ import annotations

import numpy as np

from .. import runtime
from ..core import Literal, Primitive, Tracer, concrete_value, current_builder, primitive, \
    shape_rules, type_of
from ..ir import ArrayType
from ..lowering import lowering_rules

PY_SCALARS = (bool, int, float, complex)


def define(name: str, *, shape, lower, multiple_results: bool = False) -> Primitive:
    """Register primitive `name` with its shape rule and its StableHLO lowering."""
    prim = primitive(name, multiple_results)
    shape_rules[prim] = shape
    lowering_rules[prim] = lower
    return prim


# The two places user-API code lifts host values itself; the trace will take this over.

def unchanged(x):
    """The result of a no-op: outside a trace a host operand still comes back as a
    device array, as every eager result does."""
    if current_builder() is None and not isinstance(x, (Tracer, Literal)) and \
            not runtime.is_device_array(x):
        return runtime.to_device(concrete_value(x), runtime.device())
    return x


def scalars_to(dtype, *xs):
    """Python scalars as weakly typed literals of `dtype`; other operands unchanged."""
    return [Literal(np.asarray(x, dtype), ArrayType((), np.dtype(dtype), True))
            if isinstance(x, PY_SCALARS) else x for x in xs]


def common_dtype(xs):
    """The dtype Python scalars among `xs` adopt: that of the first array operand."""
    for x in xs:
        if not isinstance(x, PY_SCALARS):
            return type_of(x).dtype
    return type_of(xs[0]).dtype
