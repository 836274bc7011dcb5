"""Statistics composed of the reductions: NaN-ignoring reductions and scans, quantiles
(median, percentile, quantile and their nan forms), average, cov, corrcoef and
count_nonzero, with JAX's algorithms, dtypes and errors."""
from __future__ import annotations

import math

import numpy as _np

from .. import dtypes as _dtypes
from .. import lax
from ..core import at_user_line
from .. import numpy as t
from ._indexing import getitem as _ix
from ._numeric import _arraylike
from ._reductions import _computation_dtype, _no_out
from ._util import (
    _canon_axes, _canon_axis, _const, _inexact, _promote_inexact, _shape, _t, ndim)


def _nan_reduction(a, name, reduction, init, nan_if_all_nan, axis, keepdims, where, **kw):
    """reduction over a with NaNs replaced by its identity (JAX's _nan_reduction)."""
    (a,) = _arraylike(name, a)
    if not _dtypes.is_inexact(_t(a).dtype):
        return reduction(a, axis=axis, keepdims=keepdims, where=where, **kw)
    nan = t.isnan(a)
    out = reduction(t.where(nan, _const(a, init), a), axis=axis, keepdims=keepdims,
                    where=where, **kw)
    if nan_if_all_nan:
        return t.where(t.all(nan, axis=axis, keepdims=keepdims), _const(a, _np.nan), out)
    return out


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out)
    return _nan_reduction(a, "nansum", t.sum, 0, False, axis, keepdims, where, dtype=dtype,
                          initial=initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out)
    return _nan_reduction(a, "nanprod", t.prod, 1, False, axis, keepdims, where, dtype=dtype,
                          initial=initial)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out)
    return _nan_reduction(a, "nanmax", t.max, -_np.inf, initial is None, axis, keepdims,
                          where, initial=initial)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out(out)
    return _nan_reduction(a, "nanmin", t.min, _np.inf, initial is None, axis, keepdims,
                          where, initial=initial)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    _no_out(out)
    (a,) = _arraylike("nanmean", a)
    if not _dtypes.is_inexact(_t(a).dtype):
        return t.mean(a, axis, dtype, keepdims=keepdims, where=where)
    dtype = _t(a).dtype if dtype is None else _dtypes.canonicalize(dtype)
    count = t.sum(t.logical_not(t.isnan(a)), axis=axis, dtype=dtype, keepdims=keepdims,
                  where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """JAX's: no dof left gives NaN; NaNs count neither in the sum nor the count."""
    _no_out(out)
    (a,) = _arraylike("nanvar", a)
    a_dt = _t(a).dtype
    if dtype is not None:
        dtype = _dtypes.canonicalize(dtype)
        if _dtypes.is_complex(a_dt) and not _dtypes.is_complex(dtype):
            raise ValueError(at_user_line(
                "jnp.var does not yet support real dtype parameters when computing the "
                "variance of an array of complex values (drop dtype=, or take real or imag "
                "first)"))
        ct = dtype
    elif not _dtypes.is_inexact(a_dt):
        dtype = ct = _inexact(a_dt)
    else:
        dtype, ct = _np.dtype(_dtypes.finfo(a_dt).dtype) if _dtypes.is_complex(a_dt) else \
            a_dt, a_dt
    ct = _computation_dtype(ct)
    a = t.astype(a, ct)
    a_mean = nanmean(a, axis, dtype=ct, keepdims=True, where=where) if mean is None else \
        t.astype(mean, ct)
    nan = t.isnan(a)
    centered = t.where(nan, 0, t.subtract(a, a_mean))
    centered = t.real(t.multiply(centered, t.conj(centered))) if _dtypes.is_complex(ct) \
        else t.square(centered)
    normalizer = t.subtract(t.sum(t.logical_not(nan), axis=axis, keepdims=keepdims,
                                  where=where), ddof)
    none_left = t.less_equal(normalizer, 0)
    result = t.where(none_left, _np.nan, t.sum(centered, axis, keepdims=keepdims, where=where))
    result = lax.div(result, t.astype(t.where(none_left, 1, normalizer), _t(result).dtype))
    return t.astype(result, dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean))


def _nanarg(arg_fn, fill, name, a, axis, out, keepdims):
    _no_out(out)
    (a,) = _arraylike(name, a)
    keepdims = bool(keepdims)
    if not _dtypes.is_inexact(_t(a).dtype):
        return arg_fn(a, axis=axis, keepdims=keepdims)
    nan = t.isnan(a)
    res = arg_fn(t.where(nan, fill, a), axis=axis, keepdims=keepdims)
    return t.where(t.all(nan, axis=axis, keepdims=keepdims), -1, res)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """-1 where a slice is all NaN, as JAX's (NumPy raises)."""
    return _nanarg(t.argmax, -_np.inf, "nanargmax", a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    return _nanarg(t.argmin, _np.inf, "nanargmin", a, axis, out, keepdims)


def _nancumulative(scan, fill, name, a, axis, dtype, out):
    _no_out(out)
    (a,) = _arraylike(name, a)
    return scan(t.where(t.isnan(a), _const(a, fill), a), axis, dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
    return _nancumulative(t.cumsum, 0, "nancumsum", a, axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    return _nancumulative(t.cumprod, 1, "nancumprod", a, axis, dtype, out)


def count_nonzero(a, axis=None, keepdims=False):
    (a,) = _arraylike("count_nonzero", a)
    return t.sum(lax.ne(a, _const(a, 0)), axis=axis, dtype=_dtypes.default_int(),
                 keepdims=keepdims)


# ---------------------------------------------------------------- quantiles

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile_args(name, a, q, weights, out, overwrite_input):
    a, q = _arraylike(name, a, q)
    if weights is not None:
        (weights,) = _arraylike(name, weights)
    if overwrite_input or out is not None:
        raise ValueError(at_user_line(
            f"jnp.{name} does not support overwrite_input=True or out != None"))
    return a, q, weights


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    a, q, weights = _quantile_args("quantile", a, q, weights, out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, False, weights)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    a, q, weights = _quantile_args("nanquantile", a, q, weights, out, overwrite_input)
    return _quantile(a, q, axis, method, keepdims, True, weights)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    a, q, weights = _quantile_args("percentile", a, q, weights, out, overwrite_input)
    (q,) = _promote_inexact(q)
    return _quantile(a, t.divide(q, 100), axis, method, keepdims, False, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    a, q, weights = _quantile_args("nanpercentile", a, q, weights, out, overwrite_input)
    (q,) = _promote_inexact(q)
    return _quantile(a, t.divide(q, 100), axis, method, keepdims, True, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


def _quantile(a, q, axis, method, keepdims, squash_nans, weights):
    """JAX's _quantile: sort along the reduced axis (several axes are moved last and
    merged first), then read the two neighbouring order statistics of q (n-1) and
    interpolate by `method`; nan forms count only the non-NaN values, which sort last."""
    if method not in _METHODS:
        raise ValueError(at_user_line(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"))
    if weights is not None:
        if _dtypes.is_complex(_t(weights).dtype):
            raise ValueError(at_user_line("Weights cannot be complex types."))
        if method != "inverted_cdf":
            raise NotImplementedError(at_user_line(
                f"{method} doesn't support weights. Only method 'inverted_cdf' supports "
                "weights."))
        a, weights = _promote_inexact(a, weights)
        if _shape(weights) != _shape(a):
            if axis is None:
                raise ValueError(at_user_line(
                    "Weights shape must match 'a' shape when axis is None."))
            axes = _canon_axes(axis, ndim(a))
            if _shape(weights) != tuple(_shape(a)[k] for k in axes):
                raise ValueError(at_user_line(
                    f"Weights shape {_shape(weights)} must match reduction axes "
                    f"{tuple(_shape(a)[k] for k in axes)}"))
            weights = lax.broadcast_in_dim(weights, _shape(a), axes)
    else:
        (a,) = _promote_inexact(a)
    if _dtypes.is_complex(_t(a).dtype):
        raise ValueError(at_user_line(
            "quantile does not support complex input, as the operation is poorly defined."))
    keep_shape = None
    if axis is None:
        keep_shape = (1,) * ndim(a) if keepdims else None
        a, weights = t.ravel(a), None if weights is None else t.ravel(weights)
        axis = 0
    elif isinstance(axis, tuple):
        axes = _canon_axes(axis, ndim(a))
        keep_shape = tuple(1 if k in axes else n for k, n in enumerate(_shape(a)))
        a, weights = (None if x is None else _merge_last(x, axes) for x in (a, weights))
        axis = ndim(a) - 1
    else:
        axis = _canon_axis(axis, ndim(a))
    if ndim(q) > 1:
        raise ValueError(at_user_line(f"q must be have rank <= 1, got shape {_shape(q)}"))
    if not _dtypes.is_inexact(_t(q).dtype):
        raise TypeError(at_user_line(
            f"q must be floating (JAX's floor refuses it), got {_t(q).dtype}: pass floats"))
    qn, n = ndim(q), _shape(a)[axis]
    reduced = tuple(1 if k == axis else s for k, s in enumerate(_shape(a)))  # kept form
    nan = t.isnan(a)
    if squash_nans:
        a = t.where(nan, _np.nan, a)  # positive NaNs sort last
    else:
        a = t.where(t.any(nan, axis=axis, keepdims=True), _np.nan, a)
    if weights is not None:
        order = t.argsort(a, axis=axis)
        a, weights = (t.take_along_axis(x, order, axis) for x in (a, weights))
    else:
        a = t.sort(a, axis=axis)
    qe = t.reshape(q, _shape(q) + (1,) * len(reduced))
    if squash_nans:
        counts = t.sum(t.logical_not(t.isnan(a)), axis=axis, dtype=_t(q).dtype, keepdims=True)
    else:
        counts = t.full((), n, _t(q).dtype)
    pos = t.multiply(qe, t.subtract(counts, 1))
    low, high = t.floor(pos), t.ceil(pos)
    high_weight = t.subtract(pos, low)
    low_weight = t.subtract(1, high_weight)
    last = t.subtract(counts, 1)

    def value(index):
        index = t.astype(t.clip(index, 0, last), _dtypes.default_int())
        index = t.broadcast_to(index, _shape(q) + reduced)
        a_q = t.broadcast_to(a, _shape(q) + _shape(a))
        return t.take_along_axis(a_q, index, axis + qn)

    if method == "inverted_cdf":
        result = _inverted_cdf(a, q, qe, axis, nan, weights, squash_nans)
    else:
        low_value, high_value = value(low), value(high)
        if method == "linear":
            qt = _t(q).dtype
            result = t.add(t.multiply(t.astype(low_value, qt), low_weight),
                           t.multiply(t.astype(high_value, qt), high_weight))
        elif method == "lower":
            result = low_value
        elif method == "higher":
            result = high_value
        elif method == "nearest":
            result = t.where(t.less_equal(high_weight, 0.5), low_value, high_value)
        else:
            result = t.multiply(t.add(low_value, high_value), 0.5)
    result = result if keepdims else t.squeeze(result, axis + qn)
    if keepdims and keep_shape is not None:
        result = t.reshape(result, _shape(q) + keep_shape)
    return t.astype(result, _t(a).dtype)


def _merge_last(x, axes):
    """x with axes moved last and merged into one."""
    keep = [k for k in range(ndim(x)) if k not in axes]
    x = t.transpose(x, keep + sorted(axes))
    return t.reshape(x, _shape(x)[:len(keep)] + (-1,))


def _inverted_cdf(a, q, qe, axis, nan, weights, squash_nans):
    """The first order statistic whose cumulative weight reaches q of the total; NaN
    where a weight is negative or NaN (or the data is, unless squashed)."""
    weights = t.ones_like(a) if weights is None else weights
    bad_weights = t.logical_or(t.less(weights, 0), t.isnan(weights))
    nan_data = t.isnan(a)
    clean = t.where(t.logical_or(bad_weights, nan_data), 0, weights)
    cum = t.cumsum(clean, axis=axis)
    total = _ix(cum, (slice(None),) * axis + (slice(-1, None),))
    is_less = t.less(t.expand_dims(cum, tuple(range(ndim(q)))), t.multiply(qe, total))
    idx = t.sum(is_less, axis=axis + ndim(q), keepdims=True, dtype=_dtypes.default_int())
    n = _shape(a)[axis]
    valid = t.sum(t.logical_not(nan_data), axis=axis, keepdims=True, dtype=_t(q).dtype) \
        if squash_nans else t.full(_shape(total), n, _t(q).dtype)
    idx = t.clip(idx, 0, t.astype(t.subtract(valid, 1), _dtypes.default_int()))
    a_q = t.broadcast_to(a, _shape(q) + _shape(a))
    result = t.take_along_axis(a_q, t.broadcast_to(idx, _shape(q) + _shape(total)),
                               axis + ndim(q))
    any_bad = t.any(bad_weights, axis=axis, keepdims=True)
    force_nan = t.logical_or(any_bad, t.equal(valid, 0) if squash_nans else
                             t.any(nan_data, axis=axis, keepdims=True))
    return t.where(force_nan, _np.nan, result)


# ---------------------------------------------------------------- moments

def average(a, axis=None, weights=None, returned=False, keepdims=False):
    _arraylike("average", a)
    axes = _canon_axes(axis, ndim(t.asarray(a)))
    if weights is None:
        (a,) = _promote_inexact(*_arraylike("average", a))
        avg = t.mean(a, axis=axis, keepdims=keepdims)
        weights_sum = t.full((), math.prod(_shape(a)[k] for k in axes), _t(avg).dtype)
    else:
        a, weights = _promote_inexact(*_arraylike("average", a, weights))
        if _shape(a) != _shape(weights):
            if axis is None:
                raise ValueError(at_user_line(
                    "Axis must be specified when shapes of a and weights differ."))
            if _shape(weights) != tuple(_shape(a)[k] for k in axes):
                raise ValueError(at_user_line(
                    "Shape of weights must be consistent with shape of a along specified "
                    "axis."))
            weights = t.reshape(t.transpose(weights, _np.argsort(axes)),
                                tuple(n if k in axes else 1 for k, n in enumerate(_shape(a))))
        weights_sum = t.sum(weights, axis=axis, keepdims=keepdims)
        avg = t.divide(t.sum(t.multiply(a, weights), axis=axis, keepdims=keepdims),
                       weights_sum)
    if returned:
        return avg, t.broadcast_to(weights_sum, _shape(avg))
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    _arraylike("cov", m, *([] if y is None else [y]))
    if y is not None:
        m, y = _promote_inexact(t.asarray(m), t.asarray(y))
        t.broadcast_shapes(_shape(m), _shape(y))  # JAX's promote_args_inexact checks it
        if ndim(y) > 2:
            raise ValueError(at_user_line("y has more than 2 dimensions"))
    else:
        (m,) = _promote_inexact(t.asarray(m))
    if ndim(m) > 2:
        raise ValueError(at_user_line("m has more than 2 dimensions"))
    if dtype is not None and not _dtypes.is_inexact(_np.dtype(dtype)):
        raise ValueError(at_user_line(
            f"cov: dtype must be a subclass of float or complex; got dtype={dtype}"))
    X = t.atleast_2d(m)
    if not rowvar and ndim(m) != 1:
        X = t.transpose(X)
    if _shape(X)[0] == 0:
        return t.reshape(t.asarray(_np.array([])), (0, 0))
    if y is not None:
        y = t.atleast_2d(y)
        if not rowvar and _shape(y)[0] != 1:
            y = t.transpose(y)
        X = t.concatenate((X, y), axis=0)
    if _shape(X)[1] == 0:
        k = _shape(X)[0]
        return t.full(() if k == 1 else (k, k), _np.nan, dtype=_t(X).dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    for name, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        (wt,) = _arraylike("cov", wt)
        if ndim(wt) > 1:
            raise RuntimeError(at_user_line(f"cannot handle multidimensional {name}"))
        if _shape(wt)[0] != _shape(X)[1]:
            raise RuntimeError(at_user_line(f"incompatible numbers of samples and {name}"))
        if name == "fweights" and not _dtypes.is_int(_t(wt).dtype):
            raise TypeError(at_user_line("fweights must be integer."))
        wt = t.abs(wt)
        if name == "aweights":
            aweights = wt
        w = wt if w is None else t.multiply(w, wt)
    if dtype is not None:
        X = t.astype(X, dtype)
        w = None if w is None else t.astype(w, dtype)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = _ix(w_sum, 0)
    if w is None:
        f = _shape(X)[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = t.subtract(w_sum, ddof)
    else:
        f = t.subtract(w_sum, t.divide(t.multiply(ddof, t.sum(t.multiply(w, aweights))), w_sum))
    X = t.subtract(X, t.expand_dims(avg, 1))
    X_T = t.transpose(X if w is None else t.multiply(X, w))
    return t.squeeze(t.true_divide(t.dot(X, t.conj(X_T)), f))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    _arraylike("corrcoef", x)
    if dtype is not None and not _dtypes.is_inexact(_np.dtype(dtype)):
        raise ValueError(at_user_line(
            f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype}"))
    c = cov(x, y, rowvar, dtype=dtype)
    if ndim(c) == 0:
        return t.divide(c, c)
    stddev = t.astype(t.sqrt(t.real(t.diag(c))), _t(c).dtype)
    c = t.divide(t.divide(c, t.expand_dims(stddev, 1)), t.expand_dims(stddev, 0))
    real = t.clip(t.real(c), -1, 1)
    if _dtypes.is_complex(_t(c).dtype):
        return lax.complex(real, t.clip(t.imag(c), -1, 1))
    return real
