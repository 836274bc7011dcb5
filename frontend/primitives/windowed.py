"""Windowed reductions, behind lax.reduce_window: reduce_window_sum, reduce_window_max and
reduce_window_min (JAX's monoid reducers, flax's pools), and the two primitives JAX
differentiates max and min through, each the other's transpose: select_and_gather_add
(the tangent at each window's chosen element) and select_and_scatter_add (a cotangent
sent back to it). JAX's first maximal (minimal) element in window order wins a tie in
both, so gradients match JAX's exactly, ties included."""
from __future__ import annotations

import operator

import numpy as np

from .. import ad, dtypes, runtime
from ..batching import axis_size, batch_at, not_mapped
from ..core import at_user_line, current_location, known_value, type_of
from ..ir import ArrayType
from ..lowering import dims_attr, tensor_type
from . import define
from .conv import _dilate, _vjp_lhs_padding, padtype_to_pads
from .elementwise import add, compare_type
from .elementwise import max as max_, min as min_
from .reductions import _scalar_body, identity_element
from .shape_ops import pad, slice as slice_


# Every primitive here has JAX's window params: window_dimensions, window_strides,
# padding=((lo, hi), ...), and (but select_and_scatter_add) base_dilation, window_dilation.
def _check_window(x, window_dimensions, window_strides, base_dilation, window_dilation,
                  name="reduce_window"):
    """JAX's checks and messages (_common_reduce_window_shape_rule), in its order; a
    dilation must be positive too, as XLA requires."""
    for arg, values in (("window_dimensions", window_dimensions),
                        ("window_strides", window_strides),
                        ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if values is not None and not all(v >= 1 for v in values):
            raise TypeError(f"{name} {arg} must have every element be strictly positive, "
                            f"got {tuple(values)}.")
    if x.ndim != len(window_dimensions):
        raise TypeError(f"{name} got the wrong number of window_dimensions for operand: got "
                        f"operand shape {x.shape} with window_dimensions {window_dimensions}.")
    for arg, values in (("window_strides", window_strides), ("base_dilation", base_dilation),
                        ("window_dilation", window_dilation)):
        if values is not None and len(values) != len(window_dimensions):
            raise TypeError(f"{name} got inconsistent {arg} and window_dimensions: got {arg} "
                            f"{values} and window_dimensions {window_dimensions}.")


def _window_shape(x, window_dimensions, window_strides, padding, base_dilation=None,
                  window_dilation=None, name="reduce_window"):
    _check_window(x, window_dimensions, window_strides, base_dilation, window_dilation, name)
    if len(padding) != len(window_dimensions):
        raise TypeError(f"{name} got inconsistent padding and window_dimensions: got padding "
                        f"{padding} and window_dimensions {window_dimensions}.")
    n = len(window_dimensions)
    base_dilation, window_dilation = base_dilation or (1,) * n, window_dilation or (1,) * n
    padded = [_dilate(size, d) + lo + hi
              for size, d, (lo, hi) in zip(x.shape, base_dilation, padding)]
    if any(p < 0 for p in padded):
        raise ValueError(f"{name} padding {padding} removes more than the (dilated) "
                         f"operand of shape {x.shape} holds")
    return tuple(max((p - _dilate(k, d)) // s + 1, 0) for p, k, d, s in zip(
        padded, window_dimensions, window_dilation, window_strides))


def _padding_attr(padding) -> str | None:
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    return f"dense<[{pads}]> : tensor<{len(padding)}x2xi64>" if padding else None


def _window_attrs(p) -> dict:
    """The reduce_window attributes, all of them, as JAX emits them."""
    attrs = {"base_dilations": dims_attr(p["base_dilation"]),
             "padding": _padding_attr(p["padding"]),
             "window_dilations": dims_attr(p["window_dilation"]),
             "window_dimensions": dims_attr(p["window_dimensions"]),
             "window_strides": dims_attr(p["window_strides"])}
    return {k: v for k, v in attrs.items() if v is not None}


_UNIT = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0), "base_dilation": 1,
         "window_dilation": 1}


def _batch(prim):
    """Every operand batched where the first batched one is, that axis given a window
    of 1, stride 1, no padding or dilation (JAX's rule, without moving the axis)."""
    def rule(values, dims, **params):
        size = axis_size(values, dims)
        d = next(e for e in dims if e is not not_mapped)
        xs = [batch_at(x, e, size, d) for x, e in zip(values, dims)]
        params = {k: v[:d] + (_UNIT[k],) + v[d:] if k in _UNIT else v
                  for k, v in params.items()}
        return [prim.bind(*xs, **params)], [d]
    return rule


_batch.takes_primitive = True


# reduce_window_{sum,max,min}[window params] operand
def _reducer(kind, **rules):
    def shape(x, **params):
        if kind == "sum" and not (dtypes.is_int(x.dtype) or dtypes.is_inexact(x.dtype)):
            raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                            f"{np.dtype(x.dtype).name}")
        return ArrayType(_window_shape(x, **params), x.dtype, x.weak)

    def lower(ctx, eqn, x):
        t = eqn.inputs[0].type
        init = ctx.constant(identity_element(kind, t.dtype), t.dtype)
        return ctx.generic("stablehlo.reduce_window", [x, init], [t, ArrayType((), t.dtype)],
                           [eqn.outputs[0].type], _window_attrs(eqn.params),
                           [_scalar_body(ctx, kind, t.dtype)])
    return define(f"reduce_window_{kind}", shape=shape, lower=lower, batch=_batch, **rules)


def _sum_vjp(cts, primals, outs, *, window_dimensions, window_strides, padding,
             base_dilation, window_dilation):
    """JAX's transpose: the cotangent spread by the strides, padded, and summed over
    windows again, with the base dilation as the strides."""
    (ct,), n = cts, len(window_dimensions)
    pads = _vjp_lhs_padding(type_of(primals[0]).shape, window_dimensions, window_strides,
                            type_of(ct).shape, padding, base_dilation, window_dilation)
    spread = pad(ct, 0, [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)])
    return [reduce_window_sum_p.bind(
        spread, window_dimensions=window_dimensions, window_strides=base_dilation,
        padding=((0, 0),) * n, base_dilation=(1,) * n, window_dilation=window_dilation)]


_CHOSEN = {"ge": "max", "le": "min"}  # a select_prim: the reduction whose element it picks


def _chooser_jvp(select_prim):
    """The tangent of each window's chosen element: select_and_gather_add."""
    def jvp(primals, tangents, **params):
        prim = reduce_window_max_p if select_prim == "ge" else reduce_window_min_p
        return ([prim.bind(primals[0], **params)],
                [select_and_gather_add_p.bind(tangents[0], primals[0],
                                              select_prim=select_prim, **params)])
    return jvp


def _scatter_to_chosen(ct, operand, select_prim, *, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation):
    """select_and_gather_add transposed (JAX's rule): the cotangent scattered to each
    window's chosen element, of the operand dilated by padding with the identity."""
    message = None
    if any(d != 1 for d in window_dilation):
        message = ("VJP not implemented for select_and_gather (MaxPool) with window "
                   f"dilation, got window_dilation={window_dilation}.")
    elif any(lo < 0 or hi < 0 for lo, hi in padding):
        message = (f"the derivative of a max or min pool with negative padding {padding} is "
                   "not supported (JAX fails on it too): slice the operand instead")
    if message:
        loc = current_location()  # in a backward pass: the line of the forward operation
        raise NotImplementedError(f"{loc}: {message}" if loc else message)
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        identity = identity_element(_CHOSEN[select_prim], type_of(operand).dtype)
        operand = pad(operand, identity.item(), [(0, 0, d - 1) for d in base_dilation])
    out = select_and_scatter_add_p.bind(
        ct, operand, select_prim=select_prim, window_dimensions=window_dimensions,
        window_strides=window_strides, padding=padding)
    if dilated:
        shape = type_of(out).shape
        out = slice_(out, (0,) * len(shape), shape, base_dilation)
    return out


def _chooser_vjp(select_prim):
    def vjp(cts, primals, outs, **params):
        return [_scatter_to_chosen(cts[0], primals[0], select_prim, **params)]
    return vjp


reduce_window_sum_p = _reducer("sum", jvp=ad.linear_jvp, vjp=_sum_vjp)
reduce_window_max_p = _reducer("max", jvp=_chooser_jvp("ge"), vjp=_chooser_vjp("ge"))
reduce_window_min_p = _reducer("min", jvp=_chooser_jvp("le"), vjp=_chooser_vjp("le"))


def _refuse_dtype(name, t, refused):
    """What JAX accepts but cannot lower: StableHLO has no GE/LE for complex numbers,
    and select_and_gather_add's init (+-inf) no integer value."""
    if refused(t.dtype):
        raise TypeError(f"{name} does not accept {np.dtype(t.dtype).name} operands")


# select_and_gather_add[select_prim: "ge" (max) or "le" (min), window params]
#   tangents, operand -> the tangent at each window's chosen element of operand
def _gather_shape(tangents, operand, *, select_prim, **params):
    if tangents.shape != operand.shape or tangents.dtype != operand.dtype:
        raise TypeError("select_and_gather_add tangents and operand shapes and dtypes must "
                        f"match, got {tangents} and {operand}.")
    _refuse_dtype("select_and_gather_add", operand,
                  lambda d: dtypes.is_int(d) or dtypes.is_complex(d))
    shape = _window_shape(operand, name="select_and_gather_add", **params)
    return ArrayType(shape, operand.dtype, tangents.weak and operand.weak)


def _gather_lowering(ctx, eqn, tangents, operand):
    """A reduce_window over (operand, tangent) pairs keeping the chosen pair, as JAX
    lowers it on CPU (its init too: +-inf as the dtype, True for bool)."""
    t, select = eqn.inputs[1].type, eqn.params["select_prim"]
    scalar, b = ArrayType((), t.dtype), ArrayType((), dtypes.bool_)
    ts, tb = tensor_type(scalar), tensor_type(b)

    def body(x, x_t, y, y_t):
        which = ctx.op(f"stablehlo.compare {select.upper()}, {x}, {y}, "
                       f"{compare_type(t.dtype)} : ({ts}, {ts}) -> {tb}")
        return [ctx.op(f"stablehlo.select {which}, {a}, {c} : ({tb}, {ts}, {ts}) -> {ts}")
                for a, c in ((x, y), (x_t, y_t))]

    region = ctx.region([scalar] * 4, [scalar] * 2, body)
    init = np.asarray(-np.inf if select == "ge" else np.inf).astype(t.dtype)
    out = eqn.outputs[0].type
    return ctx.generic("stablehlo.reduce_window",
                       [operand, tangents, ctx.constant(init, t.dtype),
                        ctx.constant(0, t.dtype)], [t, t, scalar, scalar], [out, out],
                       _window_attrs(eqn.params), [region])[1]


def _gather_jvp(primals, tangents, **params):
    """Linear in the tangents; the operand only chooses."""
    out = select_and_gather_add_p.bind(*primals, **params)
    t = tangents[0]
    return [out], [ad.Zero.like(out) if ad.is_zero(t) else
                   select_and_gather_add_p.bind(t, primals[1], **params)]


def _gather_vjp(cts, primals, outs, *, select_prim, **params):
    return [_scatter_to_chosen(cts[0], primals[1], select_prim, **params), None]


select_and_gather_add_p = define("select_and_gather_add", shape=_gather_shape,
                                 lower=_gather_lowering, jvp=_gather_jvp, vjp=_gather_vjp,
                                 batch=_batch, linear=(0,))


# select_and_scatter_add[select_prim, window_dimensions, window_strides, padding]
#   source, operand -> source added where each window of operand has its chosen element
def _scatter_shape(source, operand, *, select_prim, window_dimensions, window_strides,
                   padding):
    if source.dtype != operand.dtype:
        raise TypeError("select_and_scatter_add source and operand dtypes must match, got "
                        f"{source} and {operand}.")
    _refuse_dtype("select_and_scatter_add", operand, dtypes.is_complex)
    windows = _window_shape(operand, window_dimensions, window_strides, padding,
                            name="select_and_scatter_add")
    if source.shape != windows:
        raise TypeError(f"select_and_scatter_add source must have one element per window, "
                        f"shape {windows}, got {source}.")
    return ArrayType(operand.shape, operand.dtype, source.weak and operand.weak)


def _scatter_lowering(ctx, eqn, source, operand):
    """As JAX lowers it on CPU and GPU (XLA crashed on a padded select_and_scatter): the
    operand padded with the identity of max (min), scattered into unpadded, sliced back.
    A rank-0 one is its source (its one window chooses its one element): XLA aborts the
    process on a rank-0 select_and_scatter (JAX's grad of a rank-0 max pool does)."""
    p, t, src_t = eqn.params, eqn.inputs[1].type, eqn.inputs[0].type
    if not t.shape:
        return source
    scalar, b = ArrayType((), t.dtype), ArrayType((), dtypes.bool_)
    ts, tb = tensor_type(scalar), tensor_type(b)
    padding = p["padding"]
    padded_t = ArrayType(tuple(n + lo + hi for n, (lo, hi) in zip(t.shape, padding)), t.dtype)
    if padded_t != t:
        kind = _CHOSEN[p["select_prim"]]
        operand = ctx.generic("stablehlo.pad", [operand, ctx.constant(
            identity_element(kind, t.dtype), t.dtype)], [t, scalar], [padded_t], {
            "edge_padding_low": dims_attr([lo for lo, _ in padding]),
            "edge_padding_high": dims_attr([hi for _, hi in padding]),
            "interior_padding": dims_attr([0] * t.ndim)})
    select = ctx.region([scalar] * 2, [b], lambda x, y: ctx.op(
        f"stablehlo.compare {p['select_prim'].upper()}, {x}, {y}, {compare_type(t.dtype)} : "
        f"({ts}, {ts}) -> {tb}"))
    combine = "or" if t.dtype == dtypes.bool_ else "add"
    scatter = ctx.region([scalar] * 2, [scalar], lambda x, y: ctx.op(
        f"stablehlo.{combine} {x}, {y} : {ts}"))
    attrs = {"padding": _padding_attr([(0, 0)] * t.ndim),
             "window_dimensions": dims_attr(p["window_dimensions"]),
             "window_strides": dims_attr(p["window_strides"])}
    out = ctx.generic("stablehlo.select_and_scatter",
                      [operand, source, ctx.constant(0, t.dtype)], [padded_t, src_t, scalar],
                      [padded_t], attrs, [select, scatter])
    if padded_t == t:
        return out
    return ctx.generic("stablehlo.slice", [out], [padded_t], [t], {
        "start_indices": dims_attr([lo for lo, _ in padding]),
        "limit_indices": dims_attr([lo + n for n, (lo, _) in zip(t.shape, padding)]),
        "strides": dims_attr([1] * t.ndim)})


def _scatter_jvp(primals, tangents, **params):
    """Linear in the source; the operand only chooses."""
    out = select_and_scatter_add_p.bind(*primals, **params)
    t = tangents[0]
    return [out], [ad.Zero.like(out) if ad.is_zero(t) else
                   select_and_scatter_add_p.bind(t, primals[1], **params)]


def _scatter_vjp(cts, primals, outs, **params):
    """Transposed, it gathers again: the cotangent at each window's chosen element."""
    ones = (1,) * len(params["window_dimensions"])
    return [select_and_gather_add_p.bind(cts[0], primals[1], base_dilation=ones,
                                         window_dilation=ones, **params), None]


select_and_scatter_add_p = define("select_and_scatter_add", shape=_scatter_shape,
                                  lower=_scatter_lowering, jvp=_scatter_jvp, vjp=_scatter_vjp,
                                  batch=_batch, linear=(0,))


def _sequence(name, values):
    """A tuple of ints, or JAX's TypeError (_check_shapelike's messages)."""
    if not isinstance(values, (tuple, list, np.ndarray)):
        raise TypeError(f"reduce_window {name} must be of type tuple/list/ndarray, got "
                        f"{type(values)}.")
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"reduce_window {name} must have every element be an integer type, "
                        f"got {tuple(map(type, values))}.") from None


_MONOIDS = ((add, "sum", reduce_window_sum_p), (max_, "max", reduce_window_max_p),
            (min_, "min", reduce_window_min_p))


def _monoid(computation, init_value):
    """JAX's choice of a dedicated primitive: lax.add, lax.max or lax.min with a
    concrete scalar init equal to the identity of the init's own dtype."""
    value = np.asarray(init_value) if runtime.is_device_array(init_value) else \
        known_value(init_value)
    if value is None or value.shape != ():
        return None
    for fn, kind, prim in _MONOIDS:
        if computation is fn and value == identity_element(kind, value.dtype):
            return prim
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """JAX's lax.reduce_window for its monoids, which flax's pools use: lax.add with init
    0, lax.max with init -inf, lax.min with init inf (or the init dtype's minimum or
    maximum), as reduce_window_sum, _max and _min. JAX's general reduce_window (any other
    computation or init, a traced body) and pytrees of operands are refused."""
    if isinstance(operand, (list, tuple, dict)) or isinstance(init_value, (list, tuple, dict)):
        raise NotImplementedError(at_user_line(
            "reduce_window of a pytree of operands (JAX's variadic reduce_window) is not "
            "supported: reduce each array on its own"))
    prim = _monoid(computation, init_value)
    if prim is None:
        name = getattr(computation, "__name__", repr(computation))
        raise NotImplementedError(at_user_line(
            f"reduce_window with computation {name} and init_value {init_value!r}: only "
            "tracehlo.lax.add with init 0, lax.max with init -inf and lax.min with init inf "
            "(or the init dtype's minimum or maximum), each a concrete scalar, are supported "
            "(JAX's reduce_window_sum, _max and _min); a general computation is not. Compose "
            "the reduction from these (an average pool is a sum divided by the window size) "
            "or from strided slices of the operand."))
    x = type_of(operand)
    try:
        window_dimensions = _sequence("window_dimensions", window_dimensions)
        n = len(window_dimensions)
        params = {name: (1,) * n if values is None else _sequence(name, values)
                  for name, values in (("window_strides", window_strides),
                                       ("base_dilation", base_dilation),
                                       ("window_dilation", window_dilation))}
        if isinstance(padding, str):
            _check_window(x, window_dimensions, **params)
            window = [_dilate(k, d) for k, d in zip(window_dimensions, params["window_dilation"])]
            padding = padtype_to_pads(x.shape, window, params["window_strides"], padding)
        else:
            try:
                padding = [(operator.index(lo), operator.index(hi)) for lo, hi in padding]
            except (ValueError, TypeError) as e:
                raise ValueError("padding argument to reduce_window should be a string or a "
                                 f"sequence of (low, high) pairs, got {padding}") from e
    except (TypeError, ValueError, RuntimeError) as e:
        raise type(e)(at_user_line(str(e))) from None
    return prim.bind(operand, window_dimensions=window_dimensions, padding=tuple(padding),
                     **params)
