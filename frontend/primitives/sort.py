"""sort: a stable multi-operand sort along one axis, ordered by the first num_keys operands;
top_k: the k largest entries along one axis."""
from __future__ import annotations

import numpy as np

from .. import ad, dtypes
from ..batching import axis_size, batch_at, not_mapped
from ..core import type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define
from .elementwise import compare_type
from .indexing import _gather_vjp, gather_by_dims
from .shape_ops import broadcasted_iota, expand_dims

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


# top_k[k, axis] operand -> (values, indices): the k largest along axis, largest first
def _top_k_shape(x, *, k, axis):
    if dtypes.is_complex(x.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if not isinstance(k, (int, np.integer)):
        raise TypeError(f"k argument to top_k must be an integer, got {k!r}")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if not 0 <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    shape = list(x.shape)
    if shape[axis] < k:
        raise ValueError("k argument to top_k must be no larger than size along axis;"
                         f" got k={k} with shape={shape} and axis={axis}")
    shape[axis] = k
    # the indices are as weak as the operand: JAX's abstract eval keeps its weak_type
    return [ArrayType(tuple(shape), x.dtype, x.weak),
            ArrayType(tuple(shape), dtypes.int32, x.weak)]


def _top_k_lowering(ctx, eqn, x):
    """chlo.top_k, as JAX emits it, so XLA's TopK (and on CPU its runtime call) orders
    as JAX's: floats by their bits (NaN above inf, -NaN below -inf, -0.0 below 0.0), ties
    by lower index. It works on the last axis: another axis is swapped there and back."""
    axis, last = eqn.params["axis"], eqn.inputs[0].type.ndim - 1
    perm = list(range(last + 1))
    perm[axis], perm[last] = last, axis
    swapped = [ArrayType(tuple(t.shape[d] for d in perm), t.dtype)
               for t in [eqn.inputs[0].type] + [v.type for v in eqn.outputs]]

    def transpose(value, t_in, t_out):
        return value if axis == last else ctx.generic(
            "stablehlo.transpose", [value], [t_in], [t_out], {"permutation": dims_attr(perm)})

    x = transpose(x, eqn.inputs[0].type, swapped[0])
    outs = ctx.generic("chlo.top_k", [x], swapped[:1], swapped[1:],
                       {"k": f"{eqn.params['k']} : i64"})
    return [transpose(o, t, v.type) for o, t, v in zip(outs, swapped[1:], eqn.outputs)]


def _along(indices, axis):
    """(start indices, params) of the gather that reads the elements at `indices` along
    `axis`, the other axes as batching dimensions: JAX's top_k JVP gathers so, and
    _gather_vjp then transposes it without scatter code of our own."""
    ndim = type_of(indices).ndim
    others = tuple(d for d in range(ndim) if d != axis)
    return expand_dims(indices, (ndim,)), dict(
        offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
        operand_batching_dims=others, start_indices_batching_dims=others,
        slice_sizes=(1,) * ndim, index_vector_dim=ndim, mode="promise_in_bounds")


def _top_k_jvp(primals, tangents, *, k, axis):
    values, indices = top_k_p.bind(primals[0], k=k, axis=axis)
    starts, params = _along(indices, axis)
    return [values, indices], [gather_by_dims(tangents[0], starts, **params),
                               ad.Zero.like(indices)]


def _top_k_vjp(cts, primals, outs, *, k, axis):
    """The JVP's gather transposed: the cotangent scatter-added back where it came from."""
    starts, params = _along(outs[1], axis)
    return _gather_vjp(cts[:1], [primals[0], starts], None, **params)[:1]


def _top_k_batch(values, dims, *, k, axis):
    (x,), (d,) = values, dims
    return top_k_p.bind(x, k=k, axis=axis + (d <= axis)), [d, d]


top_k_p = define("top_k", shape=_top_k_shape, lower=_top_k_lowering, multiple_results=True,
                 jvp=_top_k_jvp, vjp=_top_k_vjp, batch=_top_k_batch)


def top_k(operand, k: int, *, axis: int = -1):
    """JAX's lax.top_k: (values, int32 indices) of the k largest entries along axis."""
    ndim = type_of(operand).ndim
    axis = axis + ndim if -ndim <= axis < 0 else axis  # out of range: the shape rule says so
    return tuple(top_k_p.bind(operand, k=k, axis=axis))
