"""The primitives, one home each: its shape rule, its lowering, its `define` call and the
user-facing wrapper (`sin`, `add`, ...) sit together in one of these modules, so a rule
can call another primitive's wrapper (`mul(g, cos(x))`) without an import cycle.

`define` is the one way to register a primitive; each interpretation keeps its own table
(shape rules in core, lowering rules in lowering). A later interpretation (jvp, transpose,
batching) adds its table and a keyword here.
"""
from __future__ import annotations

import numpy as np

from .. import ad, dtypes, runtime
from ..batching import batch_rules
from ..core import Primitive, Tracer, lift, primitive, shape_rules, type_of
from ..lowering import lowering_rules


def define(name: str, *, shape, lower, multiple_results: bool = False,
           jvp=None, vjp=None, vjp_fwd=None, batch=None, linear=None) -> Primitive:
    """Register primitive `name` with its shape rule and its StableHLO lowering, its
    derivative rules (ad.py): `jvp` (a rule, or a factory given the primitive such as
    ad.zero_jvp and ad.linear_jvp) and `vjp` (or `vjp_fwd`, a rule that emits the forward
    pass itself), the operands it is linear in (`linear`, see ad.linear_in; "all" for
    ad.linear_jvp), and its batching rule (batching.py; a rule, or a factory given the
    primitive such as batching.broadcasting_rule)."""
    prim = primitive(name, multiple_results)
    shape_rules[prim] = shape
    lowering_rules[prim] = lower
    if jvp is not None:
        ad.jvp_rules[prim] = jvp(prim) if getattr(jvp, "takes_primitive", False) else jvp
    if linear is not None or jvp is ad.linear_jvp:
        ad.linear_in[prim] = linear or "all"
    if vjp is not None:
        ad.vjp_rules[prim] = vjp
    if vjp_fwd is not None:
        ad.vjp_fwd_rules[prim] = vjp_fwd
    if batch is not None:
        batch_rules[prim] = batch(prim) if getattr(batch, "takes_primitive", False) else batch
    return prim


def unchanged(x):
    """The result of a no-op: a host operand still comes back as an array of the
    current trace (a device array eagerly), as every result does."""
    return x if isinstance(x, Tracer) or runtime.is_device_array(x) else \
        lift(x, weak=dtypes.is_weak_scalar(x))


def scalars_to(dtype, *xs):
    """Python scalars as weakly typed arrays of `dtype` (inline literals in the IR);
    other operands unchanged."""
    return [lift(x, dtype, weak=True) if dtypes.is_python_scalar(x) else x for x in xs]


def common_dtype(xs):
    """The dtype Python scalars among `xs` adopt: that of the first array operand."""
    for x in xs:
        if not dtypes.is_python_scalar(x):
            return type_of(x).dtype
    return type_of(xs[0]).dtype
