"""sort: a stable multi-operand sort along one axis, ordered by the first num_keys operands."""
from __future__ import annotations

import numpy as np

from .. import ad, dtypes
from ..batching import axis_size, batch_at, not_mapped
from ..core import type_of
from ..ir import ArrayType
from ..lowering import tensor_type
from . import define
from .elementwise import compare_type
from .shape_ops import broadcasted_iota

# sort[dimension, num_keys] *operands -> sorted operands (the same shapes)
def _sort_shape(*xs, dimension, num_keys):
    if not xs or any(x.shape != xs[0].shape for x in xs):
        raise TypeError("sort operands must all have one shape: " + ", ".join(map(str, xs)))
    if not 0 <= dimension < xs[0].ndim:
        raise ValueError(f"sort dimension {dimension} out of range for {xs[0]}")
    if not 1 <= num_keys <= len(xs):
        raise ValueError(f"sort num_keys={num_keys} must be between 1 and {len(xs)}")
    return list(xs)


def _sort_lowering(ctx, eqn, *xs):
    types = [ArrayType((), a.type.dtype) for a in eqn.inputs]
    b = ArrayType((), dtypes.bool_)
    tb = tensor_type(b)

    def canonical(x, t):
        """-0.0 as 0.0 and every NaN as one positive NaN: under TOTALORDER they would
        sort apart (and negative NaNs first), unlike NumPy's and JAX's sorts."""
        tt, sig = tensor_type(t), f"({tensor_type(t)}, {tensor_type(t)}) -> {tb}"
        zero, nan = ctx.constant(0, t.dtype), ctx.constant(np.nan, t.dtype)
        is_zero = ctx.op(f"stablehlo.compare EQ, {x}, {zero}, FLOAT : {sig}")
        x = ctx.op(f"stablehlo.select {is_zero}, {zero}, {x} : ({tb}, {tt}, {tt}) -> {tt}")
        is_nan = ctx.op(f"stablehlo.compare NE, {x}, {x}, FLOAT : {sig}")
        return ctx.op(f"stablehlo.select {is_nan}, {nan}, {x} : ({tb}, {tt}, {tt}) -> {tt}")

    def keys(args):
        """(lhs, rhs, type) per key; a complex key is its real part, then its imaginary
        part (JAX's order): StableHLO compares complex numbers for equality only."""
        for k in range(eqn.params["num_keys"]):
            lhs, rhs, t = args[2 * k], args[2 * k + 1], types[k]
            if not dtypes.is_complex(t.dtype):
                yield lhs, rhs, t
                continue
            part = ArrayType((), np.finfo(t.dtype).dtype)
            sig = f"({tensor_type(t)}) -> {tensor_type(part)}"
            for op in ("real", "imag"):
                yield (ctx.op(f"stablehlo.{op} {lhs} : {sig}"),
                       ctx.op(f"stablehlo.{op} {rhs} : {sig}"), part)

    def comparator(*args):
        # Lexicographic "less than" over the keys; floats in total order (NaN last, as NumPy).
        result = None
        for lhs, rhs, t in reversed(list(keys(args))):
            ctype = "TOTALORDER" if dtypes.is_inexact(t.dtype) else compare_type(t.dtype)
            if dtypes.is_float(t.dtype):
                lhs, rhs = canonical(lhs, t), canonical(rhs, t)
            sig = f": ({tensor_type(t)}, {tensor_type(t)}) -> {tb}"
            less = ctx.op(f"stablehlo.compare LT, {lhs}, {rhs}, {ctype} {sig}")
            if result is None:
                result = less
                continue
            equal = ctx.op(f"stablehlo.compare EQ, {lhs}, {rhs}, {ctype} {sig}")
            tie = ctx.op(f"stablehlo.and {equal}, {result} : {tb}")
            result = ctx.op(f"stablehlo.or {less}, {tie} : {tb}")
        return result

    arg_types = [t for t in types for _ in range(2)]
    region = ctx.region(arg_types, [b], comparator)
    results = ctx.generic("stablehlo.sort", xs, [a.type for a in eqn.inputs],
                          [v.type for v in eqn.outputs],
                          {"dimension": f"{eqn.params['dimension']} : i64",
                           "is_stable": "true"}, [region])
    return results if isinstance(results, list) else [results]


def _sort_batch(values, dims, *, dimension, num_keys):
    """Every operand batched where the first batched one is (unbatched ones broadcast)."""
    size = axis_size(values, dims)
    out = next(d for d in dims if d is not not_mapped)
    xs = [batch_at(x, d, size, out) for x, d in zip(values, dims)]
    return sort_p.bind(*xs, dimension=dimension + (dimension >= out),
                       num_keys=num_keys), [out] * len(xs)


def _permutation(keys, dimension, num_keys):
    """The sorted keys and, along `dimension`, where each sorted element came from."""
    shape = type_of(keys[0]).shape
    iota = broadcasted_iota(dtypes.int32, shape, dimension)
    return sort_p.bind(*keys, iota, dimension=dimension, num_keys=num_keys)


def _sort_jvp(primals, tangents, *, dimension, num_keys):
    """Tangents move with their elements: taken along the sort's permutation."""
    from ..numpy import take_along_axis
    *outs, perm = _permutation(primals, dimension, num_keys)
    return outs, [t if ad.is_zero(t) else take_along_axis(t, perm, dimension)
                  for t in tangents]


def _sort_vjp(cts, primals, outs, *, dimension, num_keys):
    """Cotangents move back: taken along the inverse permutation (the sort of perm)."""
    from ..numpy import take_along_axis
    perm = _permutation(primals, dimension, num_keys)[-1]
    inverse = _permutation([perm], dimension, 1)[-1]
    return [take_along_axis(ct, inverse, dimension) if dtypes.is_inexact(type_of(x).dtype)
            else None for ct, x in zip(cts, primals)]


sort_p = define("sort", shape=_sort_shape, lower=_sort_lowering, multiple_results=True,
                jvp=_sort_jvp, vjp=_sort_vjp,
                batch=_sort_batch, linear=lambda num_keys, **_: range(num_keys, 2 ** 31))


def sort(operands, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """JAX's lax.sort: one array, or a tuple of them sorted by the first num_keys. The
    sort is always stable, which is_stable=False allows too."""
    single = not isinstance(operands, (list, tuple))
    operands = [operands] if single else list(operands)
    ndim = type_of(operands[0]).ndim
    dimension = dimension % ndim if ndim else dimension  # rank 0: the shape rule says why
    out = sort_p.bind(*operands, dimension=dimension, num_keys=num_keys)
    return out[0] if single else tuple(out)
