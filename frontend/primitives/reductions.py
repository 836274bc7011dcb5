"""Reductions (reduce_sum ... reduce_or, argmax, argmin) and cumulative reductions
(cumsum, cumprod, cummax, cummin), all lowered to stablehlo.reduce / reduce_window."""
from __future__ import annotations

import numpy as np

from .. import ad, dtypes
from ..batching import shifted
from ..core import type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define
from .elementwise import compare_type, convert_element_type, div, eq, mul
from .elementwise import max as max_, min as min_
from .shape_ops import broadcast_in_dim, pad, reshape, transpose


def identity_element(kind: str, dtype) -> np.ndarray:
    """The init value of a reduction: x op init == x for every x."""
    dtype = np.dtype(dtype)
    if kind == "sum" or kind == "or":
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if kind == "and":
        return np.asarray(True if dtype == dtypes.bool_ else -1).astype(dtype)
    if dtype == dtypes.bool_:
        return np.asarray(kind == "min")
    if kind == "logsumexp":
        return np.asarray(-np.inf, dtype)
    if dtypes.is_inexact(dtype):
        return np.asarray(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.asarray(info.min if kind == "max" else info.max, dtype)


_COMBINER = {"sum": "stablehlo.add", "prod": "stablehlo.multiply", "max": "stablehlo.maximum",
             "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or"}


def _scalar_body(ctx, kind, dtype):
    t = ArrayType((), dtype)
    if kind in ("max", "min") and dtypes.is_complex(dtype):
        return ctx.region([t, t], [t], lambda a, b: _complex_pick(ctx, kind, t, a, b))
    if kind == "logsumexp":
        return _logaddexp_body(ctx, t)
    return ctx.region([t, t], [t], lambda a, b: ctx.op(
        f"{_COMBINER[kind]} {a}, {b} : {tensor_type(t)}"))


def _complex_pick(ctx, kind, t, a, b):
    """max/min of complex scalars in JAX's order: real parts, then imaginary parts (as
    JAX lowers them; XLA's maximum orders signed zeros otherwise)."""
    part = tensor_type(ArrayType((), np.finfo(t.dtype).dtype))
    cmp_t = f"({part}, {part}) -> tensor<i1>"
    direction = "GT" if kind == "max" else "LT"
    ra, rb = (ctx.op(f"stablehlo.real {v} : ({tensor_type(t)}) -> {part}") for v in (a, b))
    ia, ib = (ctx.op(f"stablehlo.imag {v} : ({tensor_type(t)}) -> {part}") for v in (a, b))
    real_eq = ctx.op(f"stablehlo.compare EQ, {ra}, {rb}, FLOAT : {cmp_t}")
    real_cmp = ctx.op(f"stablehlo.compare {direction}, {ra}, {rb}, FLOAT : {cmp_t}")
    imag_cmp = ctx.op(f"stablehlo.compare {direction}, {ia}, {ib}, FLOAT : {cmp_t}")
    pick_a = ctx.op(f"stablehlo.select {real_eq}, {imag_cmp}, {real_cmp} : "
                    "(tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>")
    return ctx.op(f"stablehlo.select {pick_a}, {a}, {b} : (tensor<i1>, {tensor_type(t)}, "
                  f"{tensor_type(t)}) -> {tensor_type(t)}")


def _logaddexp_body(ctx, t):
    """The region adding two scalars in log space: tracehlo.numpy's logaddexp staged at
    `t` and lowered, so the window computes what that function does (JAX's, as its
    cumlogsumexp does: for real values the max plus log1p(exp(-|a - b|)), a + b where
    a - b is NaN; for complex ones the imaginary part wrapped into [-pi, pi])."""
    from .. import core
    from ..lowering import lower_body
    from ..numpy import logaddexp  # tracehlo.numpy builds on this module
    with core.staging("logaddexp") as staged:
        a, b = staged.new_input(t), staged.new_input(t)
        graph = staged.build([logaddexp(a, b)])
    return ctx.region([t, t], [t], lambda a, b: lower_body(ctx, graph, [a, b]))


def _reduced_shape(name, x, axes):
    if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {tuple(axes)} out of range or repeated for {x}")
    return tuple(n for i, n in enumerate(x.shape) if i not in axes)


def _batch_reduction(prim, values, dims, *, axes, **params):
    """A reduction of a batched value reduces the same axes, the batch axis shifted past."""
    (x,), (d,) = values, dims
    return [prim.bind(x, axes=shifted(axes, d), **params)], [d - sum(a < d for a in axes)]


def _reduce(kind, allowed, keeps_weak=True, **rules):
    """reduce_{kind}[axes] and its wrapper; `rules`: its derivative rules for define.
    The result is as weak as the operand, except where `keeps_weak` is False (JAX's
    logical reductions always give a strong result)."""
    name = f"reduce_{kind}"

    def shape_rule(x, *, axes):
        if not allowed(x.dtype):
            raise TypeError(f"{name} does not accept {dtypes.SHORT_NAMES[x.dtype]}")
        return ArrayType(_reduced_shape(name, x, axes), x.dtype, keeps_weak and x.weak)

    def lowering(ctx, eqn, x):
        dtype = eqn.inputs[0].type.dtype
        init = ctx.constant(identity_element(kind, dtype), dtype)
        return ctx.generic("stablehlo.reduce", [x, init],
                           [eqn.inputs[0].type, ArrayType((), dtype)], [eqn.outputs[0].type],
                           {"dimensions": dims_attr(sorted(eqn.params["axes"]))},
                           [_scalar_body(ctx, kind, dtype)])

    def batch(values, dims, **params):
        return _batch_reduction(prim, values, dims, **params)
    prim = define(name, shape=shape_rule, lower=lowering, **rules,
                  batch=batch)

    def wrapper(x, axes):
        return prim.bind(x, axes=tuple(sorted(axes)))
    wrapper.__name__ = name
    return prim, wrapper


def _any(dtype):
    return True


def _number(dtype):
    return dtype != dtypes.bool_


def _intbool(dtype):
    return dtypes.is_int(dtype) or dtype == dtypes.bool_


def _expand(y, x, axes):
    """y, reduced over axes of x, broadcast back to x's shape."""
    t = type_of(x)
    return broadcast_in_dim(y, t.shape, [d for d in range(t.ndim) if d not in axes])


def _hits(x, out, axes):
    """1 where x holds the reduced max (min), else 0, and how many do per output:
    ties share the derivative. JAX's rule, in its order of operations (the tangent
    or cotangent divided by the count, not the indicator), so gradients round alike."""
    hits = convert_element_type(eq(x, _expand(out, x, axes)), type_of(x).dtype)
    return hits, reduce_sum(hits, axes)


def _chooser_vjp_fwd(reduce):
    """Reverse mode of max (min) with the indicator and counts computed forward, where
    JAX's linearization computes them: the backward pass reads them as residuals, so
    inside a scan it multiplies by a saved indicator, not by a converted compare, which
    XLA's simplifier makes a select (a nan cotangent then became 0 where JAX's stays
    nan: fuzz jit --loop --transform grad 108)."""
    def fwd(primals, *, axes):
        (x,) = primals
        out = reduce(x, axes)
        hits, counts = _hits(x, out, axes)
        return [out], lambda cts: [mul(_expand(div(cts[0], counts), x, axes), hits)]
    return fwd


def _product_of_others(x, axes):
    """For each element of x, the product of the others it is reduced with: exclusive
    cumulative products from both ends of the flattened reduced axes (no division, so
    zeros are fine)."""
    t = type_of(x)
    kept = [d for d in range(t.ndim) if d not in axes]
    perm = kept + list(axes)
    n = int(np.prod([t.shape[a] for a in axes], dtype=np.int64))
    y = reshape(transpose(x, perm), [t.shape[d] for d in kept] + [n])
    last = len(kept)

    def shifted(lo, hi):
        return pad(y, 1, [(0, 0, 0)] * last + [(lo, hi, 0)])
    others = mul(cumprod(shifted(1, -1), last), cumprod(shifted(-1, 1), last, reverse=True))
    others = reshape(others, [t.shape[p] for p in perm])
    return transpose(others, sorted(range(t.ndim), key=lambda i: perm[i]))


reduce_sum_p, reduce_sum = _reduce(
    "sum", _any, jvp=ad.linear_jvp,
    vjp=lambda cts, xs, outs, *, axes: [_expand(cts[0], xs[0], axes)])
reduce_prod_p, reduce_prod = _reduce(
    "prod", _number,
    jvp=lambda xs, ts, *, axes: ([reduce_prod(xs[0], axes)],
                                 [reduce_sum(mul(ts[0], _product_of_others(xs[0], axes)), axes)]),
    vjp=lambda cts, xs, outs, *, axes: [
        mul(_expand(cts[0], xs[0], axes), _product_of_others(xs[0], axes))])
reduce_max_p, reduce_max = _reduce(
    "max", _any,
    jvp=lambda xs, ts, *, axes: _chooser_jvp(reduce_max, xs[0], ts[0], axes),
    vjp_fwd=_chooser_vjp_fwd(lambda x, axes: reduce_max(x, axes)))
reduce_min_p, reduce_min = _reduce(
    "min", _any,
    jvp=lambda xs, ts, *, axes: _chooser_jvp(reduce_min, xs[0], ts[0], axes),
    vjp_fwd=_chooser_vjp_fwd(lambda x, axes: reduce_min(x, axes)))
reduce_and_p, reduce_and = _reduce("and", _intbool, keeps_weak=False, jvp=ad.zero_jvp)
reduce_or_p, reduce_or = _reduce("or", _intbool, keeps_weak=False, jvp=ad.zero_jvp)


def _chooser_jvp(reduce, x, t, axes):
    out = reduce(x, axes)
    hits, counts = _hits(x, out, axes)
    return [out], [div(reduce_sum(mul(t, hits), axes), counts)]


def _argminmax(kind):
    """argmax/argmin[axes=(axis,), index_dtype]: a variadic reduce over (value, index)
    that keeps the first extreme and propagates NaN, as NumPy does."""
    name = f"arg{kind}"
    direction = "GT" if kind == "max" else "LT"

    def shape_rule(x, *, axes, index_dtype):
        if len(axes) != 1:
            raise ValueError(f"arg{kind} reduces exactly one axis, got {tuple(axes)}")
        if dtypes.is_complex(x.dtype):
            raise TypeError(f"{name} does not accept complex operands: they have no order")
        shape = _reduced_shape(name, x, axes)
        if x.shape[axes[0]] == 0:
            raise ValueError(f"arg{kind} of an empty axis")
        return ArrayType(shape, np.dtype(index_dtype))

    def lowering(ctx, eqn, x):
        (axis,) = eqn.params["axes"]
        xt, out = eqn.inputs[0].type, eqn.outputs[0].type
        idx_t = ArrayType(xt.shape, out.dtype)
        indices = ctx.op(f"stablehlo.iota dim = {axis} : {tensor_type(idx_t)}")
        v, i = ArrayType((), xt.dtype), ArrayType((), out.dtype)
        b = ArrayType((), dtypes.bool_)
        tb, tv, ti = tensor_type(b), tensor_type(v), tensor_type(i)
        ctype = compare_type(xt.dtype)

        def body(x_val, x_idx, y_val, y_idx):
            cmp = f": ({tv}, {tv}) -> {tb}"
            pick = ctx.op(f"stablehlo.compare {direction}, {x_val}, {y_val}, {ctype} {cmp}")
            if dtypes.is_inexact(xt.dtype):
                x_nan = ctx.op(f"stablehlo.compare NE, {x_val}, {x_val}, {ctype} {cmp}")
                pick = ctx.op(f"stablehlo.or {pick}, {x_nan} : {tb}")
            equal = ctx.op(f"stablehlo.compare EQ, {x_val}, {y_val}, {ctype} {cmp}")
            first = ctx.op(f"stablehlo.compare LT, {x_idx}, {y_idx}, SIGNED : ({ti}, {ti}) -> {tb}")
            tie = ctx.op(f"stablehlo.and {equal}, {first} : {tb}")
            pick_idx = ctx.op(f"stablehlo.or {pick}, {tie} : {tb}")
            val = ctx.op(f"stablehlo.select {pick}, {x_val}, {y_val} : ({tb}, {tv}, {tv}) -> {tv}")
            idx = ctx.op(f"stablehlo.select {pick_idx}, {x_idx}, {y_idx} : "
                         f"({tb}, {ti}, {ti}) -> {ti}")
            return [val, idx]

        region = ctx.region([v, i, v, i], [v, i], body)
        init_v = ctx.constant(identity_element(kind, xt.dtype), xt.dtype)
        init_i = ctx.constant(0, out.dtype)
        results = ctx.generic("stablehlo.reduce", [x, indices, init_v, init_i],
                              [xt, idx_t, v, i], [ArrayType(out.shape, xt.dtype), out],
                              {"dimensions": dims_attr([axis])}, [region])
        return results[1]

    def batch(values, dims, **params):
        return _batch_reduction(prim, values, dims, **params)
    prim = define(name, shape=shape_rule, lower=lowering, jvp=ad.zero_jvp,
                  batch=batch)

    def wrapper(x, axis: int, index_dtype=dtypes.int32):
        return prim.bind(x, axes=(axis,), index_dtype=dtypes.canonicalize(index_dtype))
    wrapper.__name__ = name
    return prim, wrapper


argmax_p, argmax = _argminmax("max")
argmin_p, argmin = _argminmax("min")


def _cumulative(kind, allowed, accepted="number", **rules):
    """cum{kind}[axis, reverse]: a reduce_window whose window covers the prefix, as JAX
    lowers it; `rules`: its derivative rules for define; `accepted`: the dtypes allowed,
    as JAX's error message names them."""
    name = f"cum{kind}"

    def shape_rule(x, *, axis, reverse):
        if axis < 0:
            raise ValueError("XLA operations do not allow negative axes")
        if axis >= x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
        if not allowed(x.dtype):
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes "
                            f"are subtypes of {accepted}.")
        return x

    def lowering(ctx, eqn, x):
        t = eqn.inputs[0].type
        axis = eqn.params["axis"]
        n = max(t.shape[axis], 1)  # a window must not be empty, even over an empty axis
        window = [n if d == axis else 1 for d in range(t.ndim)]
        prefix = (0, n - 1) if eqn.params["reverse"] else (n - 1, 0)
        pad = [prefix if d == axis else (0, 0) for d in range(t.ndim)]
        pad_text = ", ".join(f"[{lo}, {hi}]" for lo, hi in pad)
        scalar = ArrayType((), t.dtype)
        init = ctx.constant(identity_element(kind, t.dtype), t.dtype)
        return ctx.generic("stablehlo.reduce_window", [x, init], [t, scalar], [t], {
            "window_dimensions": dims_attr(window),
            "window_strides": dims_attr([1] * t.ndim),
            "padding": f"dense<[{pad_text}]> : tensor<{t.ndim}x2xi64>"},
            [_scalar_body(ctx, kind, t.dtype)])

    def batch(values, dims, *, axis, reverse):
        (x,), (d,) = values, dims
        return [prim.bind(x, axis=axis + (axis >= d), reverse=reverse)], [d]
    prim = define(name, shape=shape_rule, lower=lowering, **rules,
                  batch=batch)

    def wrapper(x, axis: int = 0, reverse: bool = False):
        return prim.bind(x, axis=axis, reverse=reverse)
    wrapper.__name__ = name
    return prim, wrapper


cumsum_p, cumsum = _cumulative(
    "sum", _number, jvp=ad.linear_jvp,
    vjp=lambda cts, xs, outs, *, axis, reverse: [cumsum(cts[0], axis, not reverse)])


def _associative_scan_of(combine):
    """cum{kind} as JAX differentiates it, whatever lowering the primitive has: its
    lax.associative_scan of `combine` (odd/even recursion over slices). The derivative
    is taken from that decomposition, so it is JAX's where the decompositions' orders
    matter: rounding in cumprod, and where a NaN meets max's balanced tie rule (the
    scan's first element passes through untouched, its gradient with it)."""
    def scan(x, *, axis, reverse):
        from ..control_flow import associative_scan  # control_flow builds on this module
        return associative_scan(combine, x, reverse=reverse, axis=axis)
    return scan


cumprod_p, cumprod = _cumulative("prod", _number,
                                 **ad.rules_from(_associative_scan_of(mul)))
cummax_p, cummax = _cumulative("max", _number, **ad.rules_from(_associative_scan_of(max_)))
cummin_p, cummin = _cumulative("min", _number, **ad.rules_from(_associative_scan_of(min_)))


def _logaddexp_pair(a, b):
    """tracehlo.numpy's logaddexp, with JAX's derivative rule (a +inf counted as 0)."""
    from ..numpy import logaddexp  # tracehlo.numpy builds on this module
    return logaddexp(a, b)


cumlogsumexp_p, cumlogsumexp = _cumulative(
    "logsumexp", dtypes.is_inexact, "floating, complexfloating",
    **ad.rules_from(_associative_scan_of(_logaddexp_pair)))
