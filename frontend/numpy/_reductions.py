"""Reductions and scans, with JAX's accumulation dtypes."""
from __future__ import annotations

import builtins
import math
import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import at_user_line
from ._util import (
    _as_dtype, _canon_axes, _canon_axis, _inexact, _is_array, _operand, _shape, _t,
    _to_bool, asarray, broadcast_to, ndim, where)
from ._creation import full_like
from ._ufuncs import _abs_square, _numeric
from ._shapes import ravel


def _reduction_dtype(x, dtype, promote_ints):
    if dtype is not None:
        return _dtypes.canonicalize(dtype)
    dt = _t(x).dtype
    if promote_ints and (dt == _dtypes.bool_ or (_dtypes.is_int(dt) and dt.itemsize <
                                                  _dtypes.default_int().itemsize)):
        return _dtypes.canonicalize(_np.uint64) if _dtypes.is_unsigned(dt) else \
            _dtypes.default_int()  # JAX's default uint: uint64 under x64, else uint32
    return dt


def _keepdims(out, axes, in_shape):
    """Reinsert reduced axes as size 1 with broadcast_in_dim (as JAX's expand_dims):
    it fuses with what follows, where a reshape would not."""
    return lax.broadcast_in_dim(out, [1 if i in axes else n for i, n in enumerate(in_shape)],
                                [i for i in range(len(in_shape)) if i not in axes])


def _reduce(lax_fn, x, axis, keepdims, dtype=None, promote_ints=False, where_=None,
            identity=None, upcast_half=False):
    """promote_ints: small ints and bool accumulate in int32; upcast_half (sum, prod):
    half floats in float32 (JAX's dtypes)."""
    x = _operand(x)
    x = asarray(x) if not _is_array(x) or _dtypes.is_python_scalar(x) else x
    axes = _canon_axes(axis, ndim(x))
    dt = _reduction_dtype(x, dtype, promote_ints)
    x = lax.convert_element_type(x, dt)
    if where_ is not None:
        x = where(where_, x, full_like(x, identity))
    # reduced over no axes too, as by JAX: the forward value is the operand, but the
    # primitive's derivative is not the identity (a max's or min's is nan at a nan)
    if upcast_half and dt in (_dtypes.float16, _dtypes.bfloat16):
        # sums and products of half floats accumulate in float32, as in JAX; over no
        # axes too, where the round trip keeps what XLA may drop with excess precision
        out = lax.convert_element_type(
            lax_fn(lax.convert_element_type(x, _dtypes.float32), axes), dt)
    else:
        out = lax_fn(x, axes)
    return _keepdims(out, axes, _shape(x)) if keepdims else out


def _with_initial(combine, out, initial):
    """JAX's `initial=`: one more operand of the reduction, in the result's dtype."""
    return out if initial is None else combine(out, _as_dtype(initial, _t(out).dtype))


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    _no_out(out)
    return _with_initial(lax.add, _reduce(lax.reduce_sum, _numeric(_operand(a)), axis, keepdims,
                                          dtype, promote_integers, where, 0, True), initial)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    _no_out(out)
    return _with_initial(lax.mul, _reduce(lax.reduce_prod, _numeric(_operand(a)), axis,
                                          keepdims, dtype, promote_integers, where, 1, True),
                         initial)


def _no_out(out):
    if out is not None:
        raise NotImplementedError(at_user_line(
            "the 'out' argument is not supported: arrays are immutable (as in JAX)"))


def _extreme(lax_fn, combine, name, a, axis, keepdims, initial, where_):
    """max/min: without `initial` there is no identity, so empty axes and where= masks
    are errors (NumPy and JAX); `initial` takes a's dtype (a bool stays bool)."""
    a = _operand(a)
    if initial is None:
        if where_ is not None:
            raise ValueError(at_user_line(
                f"reduction operation {name} does not have an identity, so to use a where "
                "mask one has to specify 'initial'"))
        if builtins.any(_shape(a)[i] == 0 for i in _canon_axes(axis, ndim(a))):
            raise ValueError(at_user_line(
                f"zero-size array to reduction operation {name} which has no identity"))
    out = _reduce(lax_fn, a, axis, keepdims, where_=where_, identity=initial)
    return _with_initial(combine, out, initial)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out)
    return _extreme(lax.reduce_max, lax.max, "max", a, axis, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out)
    return _extreme(lax.reduce_min, lax.min, "min", a, axis, keepdims, initial, where)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out)
    return _reduce(lax.reduce_and, _truth(a), axis, keepdims, where_=where, identity=True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    _no_out(out)
    return _reduce(lax.reduce_or, _truth(a), axis, keepdims, where_=where, identity=False)


def _truth(a):
    """all/any read a complex value by its real part, as JAX's cast to bool does."""
    a = _operand(a)
    return _to_bool(lax.real(a) if _dtypes.is_complex(_t(a).dtype) else a)


def _count(a, axis):
    return math.prod(_shape(a)[i] for i in _canon_axes(axis, ndim(a)))


def _count_where(a, axis, where_, dt, keepdims):
    """How many elements a where= mask keeps per reduced position, in dtype dt."""
    return sum(broadcast_to(where_, _shape(a)), axis=axis, dtype=dt, keepdims=keepdims)


def _stat_dtype(a, dtype):
    return _dtypes.canonicalize(dtype) if dtype is not None else (
        _t(a).dtype if _dtypes.is_inexact(_t(a).dtype) else _inexact(_t(a).dtype))


def _computation_dtype(dt):
    """Half floats' statistics are computed in float32 and rounded once at the end, as
    JAX's (_upcast_f16): XLA then drops the round trip where excess precision is
    allowed, so a mean read as float32 keeps all its bits."""
    return _dtypes.float32 if dt in (_dtypes.float16, _dtypes.bfloat16) else dt


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _no_out(out)
    a = _operand(a)
    dt = _stat_dtype(a, dtype)
    ct = _computation_dtype(dt)
    total = sum(a, axis=axis, dtype=ct, keepdims=keepdims, where=where)
    count = _count_where(a, axis, where, ct, keepdims) if where is not None else \
        _as_dtype(_count(a, axis), ct)
    return lax.convert_element_type(lax.div(total, count), dt)


_mean = mean  # var's and std's `mean=` argument shadows the function


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """`mean`: the mean along axis, given (keepdims-shaped) instead of computed;
    `correction`: the array API's name for ddof."""
    _no_out(out)
    if correction is not None:
        if not isinstance(ddof, int) or ddof != 0:
            raise ValueError(at_user_line(
                "ddof and correction can't be provided simultaneously."))
        ddof = correction
    a = _operand(a)
    dt = _stat_dtype(a, dtype)
    if _dtypes.is_complex(_t(a).dtype) and not _dtypes.is_complex(dt):
        raise ValueError(at_user_line(
            "var does not support a real dtype for the variance of complex values (as in "
            "JAX): drop dtype=, or take tnp.real or tnp.imag first"))
    ct = _computation_dtype(dt)
    a = lax.convert_element_type(a, ct)
    a_mean = (_mean(a, axis, ct, keepdims=True, where=where) if mean is None
              else lax.convert_element_type(_operand(mean), ct))
    centered = lax.sub(a, broadcast_to(a_mean, _shape(a)))
    # |centered|^2: the variance of complex values is real
    total = sum(_abs_square(centered), axis=axis, keepdims=keepdims, where=where)
    out_dt = _t(total).dtype
    if where is not None:
        result = lax.div(total, lax.sub(_count_where(a, axis, where, out_dt, keepdims),
                                        _as_dtype(ddof, out_dt)))
    else:
        dof = _count(a, axis) - ddof  # none left: NaN, as JAX
        result = lax.div(total, _as_dtype(dof if dof > 0 else _np.nan, out_dt))
    # only half floats round back: a complex variance is real, not of dtype dt
    return lax.convert_element_type(result, dt) if ct != dt else result


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    if dtype is not None and not _dtypes.is_inexact(_dtypes.canonicalize(dtype)):
        raise ValueError(at_user_line(f"dtype argument to jnp.std must be inexact; got "
                                      f"{_np.dtype(dtype)}"))
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: max - min."""
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


def _arg_reduce(lax_fn, a, axis, keepdims):
    a = _operand(a)
    in_shape = _shape(a)
    kept = tuple(range(len(in_shape))) if axis is None else None
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon_axis(axis, ndim(a))
    if _shape(a)[axis] == 0:
        raise ValueError(at_user_line(f"attempt to get {lax_fn.__name__} of an empty sequence"))
    out = lax_fn(a, axis, _dtypes.default_int())
    return _keepdims(out, kept or (axis,), in_shape) if keepdims else out


def argmax(a, axis=None, keepdims=False):
    return _arg_reduce(lax.argmax, a, axis, keepdims)


def argmin(a, axis=None, keepdims=False):
    return _arg_reduce(lax.argmin, a, axis, keepdims)


def _cumulative(lax_fn, a, axis, dtype, bool_to_int):
    """Scans keep small int dtypes (unlike sum, as in JAX); bool counts as int. A scan
    asked for in bool runs in the default int and converts back, as JAX's does: lax's
    scans refuse bool, and XLA's i1 add would wrap (a running sum of bools is then a
    running `or`, a product a running `and`)."""
    a = _operand(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon_axis(axis, ndim(a))
    dt = _dtypes.canonicalize(dtype) if dtype is not None else _dtypes.default_int() \
        if bool_to_int and _t(a).dtype == _dtypes.bool_ else _t(a).dtype
    a = lax.convert_element_type(a, dt)
    if _shape(a)[axis] == 0:
        return a  # nothing to scan
    if dt != _dtypes.bool_:
        return lax_fn(a, axis)
    scanned = lax_fn(lax.convert_element_type(a, _dtypes.default_int()), axis)
    return lax.convert_element_type(scanned, _dtypes.bool_)


def cumsum(a, axis=None, dtype=None):
    return _cumulative(lax.cumsum, a, axis, dtype, True)


def cumprod(a, axis=None, dtype=None):
    return _cumulative(lax.cumprod, a, axis, dtype, True)


def _cumulative_array_api(what, scan, x, axis, dtype, include_initial, initial):
    """The array API's scans: axis may be omitted for 1-d input only; include_initial
    puts the identity first."""
    x = asarray(_operand(x))
    if ndim(x) == 0:
        raise ValueError(at_user_line(
            f"The input must be non-scalar to take a {what}, however a scalar value or "
            "scalar array was given."))
    if axis is None:
        if ndim(x) > 1:
            raise ValueError(at_user_line(
                f"The input array has rank {ndim(x)}, however axis was not set to an "
                "explicit value. The axis argument is only optional for one-dimensional "
                "arrays."))
        axis = 0
    axis = _canon_axis(axis, ndim(x))
    out = scan(x, axis, dtype)
    if include_initial:
        shape = list(_shape(out))
        shape[axis] = 1
        out = lax.concatenate([full_like(out, initial, shape=shape), out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """cumsum, small ints accumulated in the default int as sum does (JAX's rule)."""
    return _cumulative_array_api(
        "cumulative sum", lambda a, ax, dt: cumsum(
            a, ax, _reduction_dtype(a, dt, promote_ints=True)), x, axis, dtype,
        include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative_array_api("cumulative product", cumprod, x, axis, dtype,
                                 include_initial, 1)


def _cum_extreme(lax_fn):
    def fn(a, axis=None):
        return _cumulative(lax_fn, a, axis, None, False)
    return fn


cummax, cummin = _cum_extreme(lax.cummax), _cum_extreme(lax.cummin)
